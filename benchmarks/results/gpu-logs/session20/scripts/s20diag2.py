"""Session 20: the Triton kernels Inductor generates for a compiled tiny CUDA decode, with their source ops."""
import torch, torch_wanops
from torch_wanops import compile as cm
from torch_wanops.configs import build_vae, latent_channels
for dtype in (torch.float32,):
    stock = build_vae("wan2.1-tiny", dtype=dtype, device="cuda")
    vae = build_vae("wan2.1-tiny", dtype=dtype, device="cuda")
    z = torch.randn(1, latent_channels("wan2.1-tiny"), 3, 8, 12, generator=torch.Generator().manual_seed(0)).to("cuda", dtype)
    torch_wanops.compile_vae(vae, enabled=True)
    torch_wanops.prewarm(vae, tuple(z.shape))
    with torch.no_grad():
        print(dtype, torch.equal(vae.decode(z, return_dict=False)[0], stock.decode(z, return_dict=False)[0]), flush=True)
