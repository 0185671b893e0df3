"""Session 30 E: the first step of the latent stage, through the decoder's own functions, whose G-frame output
differs from its one-frame outputs (G = 5 and 21), per model (bf16 480x832 latents)."""

import torch

from torch_wanops.configs import build_vae
from torch_wanops.decoder import OmniAutoencoderKLWan, attention_block, causal_conv, residual_block

print(torch.__version__, torch.cuda.get_device_name())
for model, size in (("wan2.1", (60, 104)), ("wan2.2", (30, 52))):
    vae = build_vae(model, dtype=torch.bfloat16, device="cuda", vae_class=OmniAutoencoderKLWan)
    dec = vae.decoder
    steps = [("conv_in", lambda x, c, i: causal_conv(dec.conv_in, x, c, i)),
             ("mid resnet 0", lambda x, c, i: residual_block(dec.mid_block.resnets[0], x, c, i, True)),
             ("mid attention", lambda x, c, i: attention_block(dec.mid_block.attentions[0], x)),
             ("mid resnet 1", lambda x, c, i: residual_block(dec.mid_block.resnets[1], x, c, i, True))]
    steps += [(f"up0 resnet {k}", lambda x, c, i, r=r: residual_block(r, x, c, i, True))
              for k, r in enumerate(dec.up_blocks[0].resnets)]
    z = torch.randn(1, vae.config.z_dim, 21, *size, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)

    def run(x, group):
        """Each step's output over all frames, the steps run on chunks of ``group`` frames."""
        cache, outs = [None] * 64, [[] for _ in steps]
        for t in range(0, x.shape[2], group):
            h, idx = x[:, :, t:t + group], [0]
            for k, (_, step) in enumerate(steps):
                h = step(h, cache, idx)
                outs[k].append(h)
        return [torch.cat(o, 2) for o in outs]

    with torch.no_grad():
        x = vae.post_quant_conv(z)
        one = run(x, 1)
        for group in (5, 21):
            run(x, group)  # the conv checks of the new geometries first
            many = run(x, group)
            report = []
            for (name, _), a, b in zip(steps, many, one):
                report.append(f"{name} {sum(torch.equal(a[:, :, t], b[:, :, t]) for t in range(21))}/21")
            print(f"{model} G={group}: " + ", ".join(report), flush=True)

    # Step by step from the same inputs: each step fed the one-frame path's previous output.
    with torch.no_grad():
        for group in (5, 21):
            report = []
            for k, (name, step) in enumerate(steps):
                src = x if k == 0 else one[k - 1]
                cache_g, cache_1 = [None] * 64, [None] * 64
                outs_g, outs_1 = [], []
                for t in range(0, 21, group):
                    outs_g.append(step(src[:, :, t:t + group], cache_g, [0]))
                for t in range(21):
                    outs_1.append(step(src[:, :, t:t + 1], cache_1, [0]))
                a, b = torch.cat(outs_g, 2), torch.cat(outs_1, 2)
                report.append(f"{name} {sum(torch.equal(a[:, :, t], b[:, :, t]) for t in range(21))}/21")
            print(f"{model} G={group}, each step alone: " + ", ".join(report), flush=True)
