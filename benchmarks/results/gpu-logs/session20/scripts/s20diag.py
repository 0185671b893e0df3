"""Session 20: where a compiled tiny fp32 CUDA decode leaves stock's bits (eager, aot_eager, inductor)."""
import sys, torch, torch_wanops
from torch_wanops import compile as cm
from torch_wanops.configs import build_vae, latent_channels
import torch._inductor.config as ic
for arch in ("wan2.1-tiny",):
    for dtype in (torch.float32, torch.bfloat16):
        stock = build_vae(arch, dtype=dtype, device="cuda")
        vae = torch_wanops.apply_to(build_vae(arch, dtype=dtype, device="cuda"))
        z = torch.randn(1, latent_channels(arch), 3, 8, 12, generator=torch.Generator().manual_seed(0)).to("cuda", dtype)
        with torch.no_grad():
            ref = stock.decode(z, return_dict=False)[0]
            eager = vae.decode(z, return_dict=False)[0]
            print(arch, dtype, "eager", torch.equal(eager, ref), (eager - ref).abs().max().item(), flush=True)
            for backend in ("aot_eager", "inductor"):
                torch._dynamo.reset()
                dec = vae.decoder
                c = torch.compile(dec.decode_chunk, fullgraph=True, backend=backend)
                def fwd(x, feat_cache=None, feat_idx=[0], first_chunk=False):
                    with cm.exact_inductor_settings():
                        return c(x, feat_cache, feat_idx, first_chunk, True)
                dec.forward = fwd
                got = vae.decode(z, return_dict=False)[0]
                del dec.forward
                print(arch, dtype, backend, torch.equal(got, ref), (got - ref).abs().max().item(), flush=True)
            # stock decoder compiled with aot_eager: does tracing alone change stock's bits?
            torch._dynamo.reset()
            sd = stock.decoder
            sc = torch.compile(sd.forward, backend="aot_eager")
            sd.forward = sc
            got = stock.decode(z, return_dict=False)[0]
            del sd.forward
            print(arch, dtype, "stock aot_eager", torch.equal(got, ref), (got - ref).abs().max().item(), flush=True)
