"""test_many_decodes_of_random_shapes' loop, reporting every failing step instead of stopping at the first."""
import os, sys
root = sys.argv[1]
sys.path[:0] = [root, os.path.join(root, "tests")]
import torch
from torch_wanops import decoder as decoder_module
if len(sys.argv) > 2:
    setattr(decoder_module, sys.argv[2], False)
from test_decoder import latents, pair
generator = torch.Generator().manual_seed(0)
models = {arch: pair(arch, device="cuda") for arch in ("wan2.1-tiny", "wan2.2-tiny")}
shapes = [(arch, frames, height, width) for arch in models for frames in (1, 2, 3) for height, width in ((4, 6), (5, 3))]
bad = []
for step in range(1000):
    arch, frames, height, width = shapes[int(torch.randint(len(shapes), (1,), generator=generator))]
    stock, omni = models[arch]
    z = latents(arch, torch.float32, "cuda", frames=frames, height=height, width=width, seed=step)
    with torch.no_grad():
        a = stock.decode(z, return_dict=False)[0]
        b = omni.decode(z, return_dict=False)[0]
    if not torch.equal(a, b):
        bad.append((step, arch, frames, height, width, (a - b).abs().max().item()))
print(root, sys.argv[2:], "failing steps:", len(bad), bad[:8])
import collections
print(collections.Counter(x[1:5] for x in bad))
