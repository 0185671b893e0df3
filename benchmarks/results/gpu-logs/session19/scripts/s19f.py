"""Session 19: the decoder's own log of its chunked-conv verdicts in fp32 decodes (why geometries keep cuDNN's conv)."""
import logging
import sys

import torch

from torch_wanops import bench, decoder

logging.basicConfig(level=logging.INFO, stream=sys.stdout, format="%(name)s: %(message)s")
logging.getLogger("torch_wanops.decoder").setLevel(logging.INFO)
for height, width in ((480, 832), (720, 1280)):
    config = bench.BenchConfig(model="wan2.1", dtype="fp32", height=height, width=width, frames=81, device="cuda")
    vae = bench.load_vae(config)
    z = bench.make_latents(config, vae)
    decoder.clear_conv_verdicts()
    with torch.no_grad(), bench.variant(vae, "wanops-eager"):
        vae.decode(z)
    for key, verdict in decoder._chunked_conv_verdicts.items():
        print(f"{height}x{width} verdict {verdict}: {bench.describe_geometry(key)}", flush=True)
    del vae, z
    torch.cuda.empty_cache()
