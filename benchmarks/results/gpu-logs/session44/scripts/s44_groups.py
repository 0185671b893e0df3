"""Session 44: which latent-stage group a Wan2.2 bf16 720x1280x81 decode runs, and the stage verdicts it records."""
import logging
import torch
import torch_wanops
from torch_wanops import decoder as d
from torch_wanops.configs import build_vae, latent_shape

logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
logging.getLogger("torch_wanops").setLevel(logging.INFO)
vae = build_vae("wan2.2", dtype=torch.bfloat16, device="cuda", vae_class=torch_wanops.OmniAutoencoderKLWan)
z = torch.randn(latent_shape("wan2.2", 720, 1280, 81), device="cuda", dtype=torch.bfloat16)
print("group", d.latent_stage_group(vae.decoder, vae.post_quant_conv(z)))
with torch.no_grad():
    vae.decode(z)
for key, verdict in d._latent_stage_verdicts.items():
    print("verdict", verdict, key[0][0], key[2])
