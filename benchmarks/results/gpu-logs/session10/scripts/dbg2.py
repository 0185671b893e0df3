"""Which conv geometries the kernel check refuses in real decodes, and the kernels of each layout."""
import logging, sys, torch
import torch_wanops
from torch_wanops import decoder as D
from torch_wanops.configs import build_vae, latent_shape
logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
for arch in ("wan2.1", "wan2.2"):
    for dtype in (torch.bfloat16, torch.float32):
        for h, w in ((240, 416), (480, 832)):
            D._channels_last_conv_verdicts.clear()
            z = torch.randn(latent_shape(arch, h, w, 9), generator=torch.Generator().manual_seed(0)).to("cuda", dtype)
            vae = build_vae(arch, seed=0, dtype=dtype, device="cuda", vae_class=torch_wanops.OmniAutoencoderKLWan)
            print(f"=== {arch} {dtype} {h}x{w}", flush=True)
            with torch.no_grad():
                vae.decode(z)
            print(f"=== refused {[k[:2] for k, ok in D._channels_last_conv_verdicts.items() if not ok]} of {len(D._channels_last_conv_verdicts)}", flush=True)
            del vae
            torch.cuda.empty_cache()
