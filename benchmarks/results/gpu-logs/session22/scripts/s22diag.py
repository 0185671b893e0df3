"""session 22: where a compiled real-config bf16 CUDA decode leaves stock's bits: per-chunk outputs against stock's."""
import sys

import torch
from torch._dynamo.utils import counters

import torch_wanops
from torch_wanops.configs import build_vae, latent_channels


def recording(decoder, outputs):
    forward = decoder.forward

    def record(*args, **kwargs):
        out = forward(*args, **kwargs)
        outputs.append(out.detach().clone())
        return out

    decoder.forward = record


arch = sys.argv[1]
for frames, h, w in [(3, 8, 8), (3, 60, 104)]:
    torch._dynamo.reset()
    counters.clear()
    stock = build_vae(arch, dtype=torch.bfloat16, device="cuda")
    vae = build_vae(arch, dtype=torch.bfloat16, device="cuda")
    torch_wanops.compile_vae(vae, enabled=True)
    z = torch.randn(1, latent_channels(arch), frames, h, w, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)
    torch_wanops.prewarm(vae, tuple(z.shape))
    got_chunks, stock_chunks = [], []
    recording(vae.decoder, got_chunks)
    recording(stock.decoder, stock_chunks)
    with torch.no_grad():
        got = vae.decode(z).sample
        expected = stock.decode(z).sample
    diff = (got.float() - expected.float()).abs()
    print(arch, (frames, h, w), "graphs", counters["stats"]["unique_graphs"], "equal", torch.equal(got, expected),
          "max", diff.max().item(), "differing share", (diff > 0).float().mean().item(), flush=True)
    for i, (a, b) in enumerate(zip(got_chunks, stock_chunks)):
        d = (a.float() - b.float()).abs()
        print("  chunk", i, tuple(a.shape), a.stride(), b.stride(), "equal", torch.equal(a, b), "max", d.max().item(),
              "differing share", (d > 0).float().mean().item(), flush=True)
