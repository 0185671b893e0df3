"""session 24: where a compiled fp32 CUDA decode (tiny configs, 3x8x8 latents) leaves stock's bits, per Dynamo backend:
eager (Dynamo's graphs run as traced), aot_eager (the ATen graph), aot_eager_decomp_partition (with Inductor's
decompositions), inductor (generated code)."""
import sys

import torch
from torch._dynamo.utils import counters

import torch_wanops
from torch_wanops.configs import build_vae, latent_channels

compile_fn = torch.compile
backend = ["inductor"]
torch.compile = lambda fn, **kwargs: compile_fn(fn, **{**kwargs, "backend": backend[0]} if backend[0] != "inductor" else kwargs)


def recording(decoder, outputs):
    forward = decoder.forward

    def record(*args, **kwargs):
        out = forward(*args, **kwargs)
        outputs.append(out.detach().clone())
        return out

    decoder.forward = record


import os

torch.backends.cudnn.allow_tf32 = os.environ.get("DIAG_TF32", "1") == "1"
numerics = getattr(torch._inductor.config, "eager_numerics", None)
if numerics is not None and os.environ.get("DIAG_NO_FTZ") == "1":
    numerics.disable_ftz = True
print("cudnn tf32", torch.backends.cudnn.allow_tf32, "eager_numerics", numerics and vars(numerics).get("division_rounding", numerics.division_rounding),
      numerics and numerics.disable_ftz, flush=True)
for arch in sys.argv[1:]:
    for name in os.environ.get("DIAG_BACKENDS", "eager aot_eager aot_eager_decomp_partition inductor").split():
        backend[0] = name
        torch._dynamo.reset()
        counters.clear()
        stock = build_vae(arch, dtype=torch.float32, device="cuda")
        vae = build_vae(arch, dtype=torch.float32, device="cuda")
        torch_wanops.compile_vae(vae, enabled=True)
        z = torch.randn(1, latent_channels(arch), 3, 8, 8, generator=torch.Generator().manual_seed(0)).to("cuda")
        torch_wanops.prewarm(vae, tuple(z.shape))
        got_chunks, stock_chunks = [], []
        recording(vae.decoder, got_chunks)
        recording(stock.decoder, stock_chunks)
        with torch.no_grad():
            got = vae.decode(z).sample
            expected = stock.decode(z).sample
        print(arch, name, "graphs", counters["stats"]["unique_graphs"], "equal", torch.equal(got, expected),
              "max", (got - expected).abs().max().item(), flush=True)
        for i, (a, b) in enumerate(zip(got_chunks, stock_chunks)):
            d = (a - b).abs()
            print("  chunk", i, "equal", torch.equal(a, b), "max", d.max().item(),
                  "differing share", (d > 0).float().mean().item(), flush=True)
