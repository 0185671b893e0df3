import sys, torch
sys.path.insert(0, "tests")
import torch_wanops
from test_decoder import pair, latents
stock, omni = pair("wan2.1-tiny", torch.float16, "cuda", False)
z = latents("wan2.1-tiny", torch.float16, "cuda", frames=2, batch=2)
log = []
orig = torch.nn.Conv3d.forward
def patched(self, x, *rest):
    out = orig(self, x, *rest); log.append((tuple(x.shape), x.stride(), out.stride())); return out
torch.nn.Conv3d.forward = patched
with torch.no_grad():
    a = stock.decode(z).sample
    s = list(log); log.clear()
    b = omni.decode(z).sample
print("out strides", a.stride(), b.stride(), len(s), len(log))
for i, (p, q) in enumerate(zip(s, log)):
    if p != q:
        print("first divergence at conv", i, "\n stock", p, "\n omni ", q)
        print(" previous", s[i-1] if i else None); break
