"""session 22: a compiled real-config bf16 CUDA decode (3x60x104 latents) per chunk against stock, per Dynamo backend:
aot_eager runs the traced ATen graph as it is, inductor generates code for what is not an op or an extern kernel."""
import sys

import torch
from torch._dynamo.utils import counters

import torch_wanops
from torch_wanops.configs import build_vae, latent_channels

backend = sys.argv[1]
compile_fn = torch.compile
torch.compile = lambda fn, **kwargs: compile_fn(fn, **{**kwargs, "backend": backend})


def recording(decoder, outputs):
    forward = decoder.forward

    def record(*args, **kwargs):
        out = forward(*args, **kwargs)
        outputs.append(out.detach().clone())
        return out

    decoder.forward = record


torch._dynamo.reset()
counters.clear()
stock = build_vae("wan2.1", dtype=torch.bfloat16, device="cuda")
vae = build_vae("wan2.1", dtype=torch.bfloat16, device="cuda")
torch_wanops.compile_vae(vae, enabled=True)
z = torch.randn(1, latent_channels("wan2.1"), 3, 60, 104, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)
torch_wanops.prewarm(vae, tuple(z.shape))
got_chunks, stock_chunks = [], []
recording(vae.decoder, got_chunks)
recording(stock.decoder, stock_chunks)
with torch.no_grad():
    got = vae.decode(z).sample
    expected = stock.decode(z).sample
print(backend, "graphs", counters["stats"]["unique_graphs"], "equal", torch.equal(got, expected),
      "max", (got.float() - expected.float()).abs().max().item(), flush=True)
for i, (a, b) in enumerate(zip(got_chunks, stock_chunks)):
    d = (a.float() - b.float()).abs()
    print("  chunk", i, "equal", torch.equal(a, b), "max", d.max().item(), "differing share", (d > 0).float().mean().item(), flush=True)
