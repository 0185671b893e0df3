"""session 24: Inductor's compiler bisector on the compiled fp32 CUDA decode (wan2.1-tiny, 3x8x8 latents, TF32 as default):
which backend, subsystem and lowering first leaves stock's bits."""
import torch
from torch._inductor import compiler_bisector
from torch._inductor.compiler_bisector import CompilerBisector

import torch_wanops
from torch_wanops import compile as compile_module
from torch_wanops.configs import build_vae, latent_channels

stock = build_vae("wan2.1-tiny", dtype=torch.float32, device="cuda")
z = torch.randn(1, latent_channels("wan2.1-tiny"), 3, 8, 8, generator=torch.Generator().manual_seed(0)).to("cuda")
with torch.no_grad():
    expected = stock.decode(z).sample


def gives_stock_bits() -> bool:
    torch._dynamo.reset()
    vae = build_vae("wan2.1-tiny", dtype=torch.float32, device="cuda")
    vae.load_state_dict(stock.state_dict())
    torch_wanops.compile_vae(vae, enabled=True)
    torch_wanops.prewarm(vae, tuple(z.shape))
    with torch.no_grad():
        got = vae.decode(z).sample
    # a graph that failed to compile runs eagerly and gives stock's bits: not a fix
    equal = torch.equal(got, expected) and compile_module.is_compiled(vae)
    print("run:", "equal" if equal else f"max {(got - expected).abs().max().item():.3g}", flush=True)
    return equal


# command F: only the lowerings (E's post_grad_passes "fix" was the fallback after the passes' removal broke compilation)
# (command G: and without the crossref backend, under which the ops' auto_functionalized_v2 does not compile)
del compiler_bisector.BACKENDS["aot_eager_decomp_partition_crossref"]
compiler_bisector.BACKENDS["inductor"] = [
    subsystem for subsystem in compiler_bisector.BACKENDS["inductor"] if getattr(subsystem, "name", "") == "lowerings"
]
print("result:", CompilerBisector.do_bisect(gives_stock_bits), flush=True)
