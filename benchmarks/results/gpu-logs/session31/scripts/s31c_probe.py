"""Session 31 C: which step after Wan2.2's latent stage leaves the one-frame bits when it runs on 5 latent frames
per call (B's (c): 1/41 frames equal), bf16 480x832 latents, 21 frames: the first up block's temporal upsampler
(time conv and frame interleave), its spatial upsample and conv, the DupUp3D shortcut, then the second up block's
residual blocks. Chained, then each step fed the per-frame path's previous output (contiguous)."""

import torch

from torch_wanops.configs import build_vae
from torch_wanops.decoder import (OmniAutoencoderKLWan, _latent_stage, causal_conv, dup_up3d_add, residual_block,
                                  upsample_conv)

print(torch.__version__, torch.cuda.get_device_name())
for model, size in (("wan2.2", (30, 52)),):
    vae = build_vae(model, dtype=torch.bfloat16, device="cuda", vae_class=OmniAutoencoderKLWan)
    dec = vae.decoder
    up0, up1 = dec.up_blocks[0], dec.up_blocks[1]
    shortcut = up0.avg_shortcut

    def time_upsample(x, c, i, source):
        b, ch, f, h, w = x.shape
        x = causal_conv(up0.upsampler.time_conv, x, c, i).reshape(b, 2, ch, f, h, w)
        return torch.stack((x[:, 0], x[:, 1]), 3).reshape(b, ch, f * 2, h, w)

    steps = [("time conv + interleave", time_upsample),
             ("spatial upsample + conv", lambda x, c, i, s: upsample_conv(up0.upsampler.resample, x, True)),
             ("DupUp3D add", lambda x, c, i, s: dup_up3d_add(x, s, shortcut.factor_t, shortcut.factor_s,
                                                             shortcut.repeats, False))]
    steps += [(f"up1 resnet {k}", lambda x, c, i, s, r=r: residual_block(r, x, c, i, True))
              for k, r in enumerate(up1.resnets)]
    z = torch.randn(1, vae.config.z_dim, 21, *size, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)

    with torch.no_grad():
        x = vae.post_quant_conv(z)
        cache = [None] * 64
        _latent_stage(dec, x[:, :, :1], cache, True)
        stage_out, source, slot = _latent_stage(dec, x[:, :, 1:], cache, True)  # the later frames' stage, one call
        # Every step's cache primed by a first chunk of the tail (frame 0's stage output, the upsampler's "Rep").
        primed = list(cache)
        primed[slot] = stage_out[:, :, :1].contiguous()  # the time conv's cache: frame 0's input, as stock's 2nd call
        frames = stage_out.shape[2]

        def run(inputs, group, fed):
            """Each step over all frames, on chunks of ``group`` latent frames; ``fed``: each step's input is
            inputs[k] (the previous step's per-frame output) instead of the previous step's own output."""
            c, outs = list(primed), [[] for _ in steps]
            for t in range(0, frames, group):
                h, idx = stage_out[:, :, t:t + group], [slot]
                for k, (_, step) in enumerate(steps):
                    scale = 1 if k == 0 else 2  # after the time upsampler two frames per latent frame
                    if fed and k > 0:
                        h = inputs[k - 1][:, :, scale * t:scale * (t + group)].contiguous()
                    h = step(h, c, idx, source[:, :, t:t + group])
                    outs[k].append(h)
            return [torch.cat(o, 2) for o in outs]

        one = run(None, 1, False)
        for fed in (False, True):
            run(one, 5, fed)  # the conv checks of the new geometries first
            many = run(one, 5, fed)
            report = [f"{name} {sum(torch.equal(a[:, :, t], b[:, :, t]) for t in range(a.shape[2]))}/{a.shape[2]}"
                      f" {tuple(a.stride())} vs {tuple(b.stride())}"
                      for (name, _), a, b in zip(steps, many, one)]
            print(f"{model} G=5 {'each step alone' if fed else 'chained'}:\n  " + "\n  ".join(report), flush=True)
