"""Session 31 B: would the frame batching pay past the latent stage? Wan2.2 and Wan2.1 bf16 480x832, 21 latent
frames, through the decoder's own functions: frame 0 as the first chunk, then the later frames
(a) one latent frame per call through the latent stage, the first up block's upsampler and shortcut, and the second
    up block's residual blocks (stock's chunks);
(b) today's default: the latent stage on 5 frames per call, the rest per frame;
(c) all of it on 5 latent frames per call.
Frames equal to (a), and GPU time (CUDA-graph replays after an eager warm-up that records the conv checks)."""

import torch
import triton.testing

from torch_wanops.configs import build_vae
from torch_wanops.decoder import (OmniAutoencoderKLWan, _frames, _latent_stage, residual_block, up_block_tail)

print(torch.__version__, torch.cuda.get_device_name())
for model, size in (("wan2.2", (30, 52)), ("wan2.1", (60, 104))):
    vae = build_vae(model, dtype=torch.bfloat16, device="cuda", vae_class=OmniAutoencoderKLWan)
    dec = vae.decoder
    z = torch.randn(1, vae.config.z_dim, 21, *size, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)

    def after_stage(out, source, cache, slot, first):
        idx = [slot]
        out = up_block_tail(dec.up_blocks[0], out, source, cache, idx, first, False, True)
        for resnet in dec.up_blocks[1].resnets:
            out = residual_block(resnet, out, cache, idx, True)
        return out

    def run(x, stage_group, tail_group):
        cache = [None] * 64
        out, source, slot = _latent_stage(dec, x[:, :, :1], cache, True)
        outs = [after_stage(out, source, cache, slot, True)]
        for t in range(1, x.shape[2], stage_group):
            out, source, slot = _latent_stage(dec, x[:, :, t:t + stage_group], cache, True)
            if tail_group == stage_group:
                outs.append(after_stage(out, source, cache, slot, False))
            else:
                outs += [after_stage(o, s, cache, slot, False) for o, s in zip(_frames(out), _frames(source))]
        return torch.cat(outs, 2)

    with torch.no_grad():
        x = vae.post_quant_conv(z)
        base = run(x, 1, 1)
        base_ms = None
        for label, groups in (("(a) per frame", (1, 1)), ("(b) stage x5", (5, 1)), ("(c) all x5", (5, 5))):
            out = run(x, *groups)
            equal = sum(torch.equal(out[:, :, t], base[:, :, t]) for t in range(out.shape[2]))
            ms = triton.testing.do_bench_cudagraph(lambda: run(x, *groups), rep=300)
            base_ms = base_ms or ms
            print(f"{model} {label}: {equal}/{out.shape[2]} frames equal to (a), strides {out.stride()}, "
                  f"{ms:.3f} ms ({base_ms / ms:.3f}x)", flush=True)
    del vae, dec
    torch.cuda.empty_cache()
