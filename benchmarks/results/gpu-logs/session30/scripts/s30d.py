"""Session 30 D: the latent stage through OmniWanDecoder's own functions, per chunk of 1 (today) against G frames per
chunk: frames equal to today's, and GPU time (CUDA-graph replays after an eager warm-up that records the conv checks)."""

import sys

import torch
import triton.testing

sys.path.insert(0, "benchmarks")
from probe_frame_batching import equal_frames, stage_in_groups  # noqa: E402
from torch_wanops.configs import build_vae  # noqa: E402
from torch_wanops.decoder import OmniAutoencoderKLWan, causal_conv, mid_block, residual_block  # noqa: E402

print(torch.__version__, torch.cuda.get_device_name())
for model, size in (("wan2.2", (30, 52)), ("wan2.1", (60, 104))):
    vae = build_vae(model, dtype=torch.bfloat16, device="cuda", vae_class=OmniAutoencoderKLWan)
    dec = vae.decoder
    z = torch.randn(1, vae.config.z_dim, 21, *size, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)

    def omni_stage(x, feat_cache):
        feat_idx = [0]
        out = causal_conv(dec.conv_in, x, feat_cache, feat_idx)
        out = mid_block(dec.mid_block, out, feat_cache, feat_idx, True)
        for resnet in dec.up_blocks[0].resnets:
            out = residual_block(resnet, out, feat_cache, feat_idx, True)
        return out

    def omni_groups(x, group):
        cache = [None] * 64
        return torch.cat([omni_stage(x[:, :, t:t + group], cache) for t in range(0, x.shape[2], group)], 2)

    with torch.no_grad():
        x = vae.post_quant_conv(z)
        stock = stage_in_groups(dec, x, 1)
        today = omni_groups(x, 1)
        print(f"{model}: wanops chunks of 1 equal to stock's: {equal_frames(today, stock)}/21")
        base = None
        for group in (1, 3, 5, 7, 21):
            out = omni_groups(x, group)  # eager first: the conv checks of this geometry
            ms = triton.testing.do_bench_cudagraph(lambda: omni_groups(x, group), rep=300)
            base = base or ms
            print(f"{model}: wanops chunks of {group}: {equal_frames(out, today)}/21 frames equal to chunks of 1, "
                  f"{ms:.3f} ms ({base / ms:.2f}x)", flush=True)
