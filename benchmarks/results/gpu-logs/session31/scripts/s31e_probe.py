"""Session 31 E (written for the next session, not run): which part of Wan2.2's second up block's first residual
block leaves the one-chunk bits when it runs on 10 frames per call instead of 2 (C: 0/40 frames). bf16, 1024
channels at 60x104, 20 frames; each part on chunks of 2 frames against chunks of 10, frames equal:
- the channel norm's ATen reduction (`torch.linalg.vector_norm` over channels in fp32, as stock's F.normalize);
- the 3x3x3 conv alone, both on the same channels-last padded input windows (cuDNN, no bias);
- the block's first step through the decoder (norm, SiLU, padding and cache, the conv, its bias), chained over chunks.
"""

import torch
import torch.nn.functional as F

from torch_wanops.configs import build_vae
from torch_wanops.decoder import OmniAutoencoderKLWan, norm_act_conv


def equal_frames(a, b):
    return f"{sum(torch.equal(a[:, :, t], b[:, :, t]) for t in range(a.shape[2]))}/{a.shape[2]}"


device = "cuda" if torch.cuda.is_available() else "cpu"
model, dtype, frames = ("wan2.2", torch.bfloat16, 20) if device == "cuda" else ("wan2.2-tiny", torch.float32, 20)
vae = build_vae(model, dtype=dtype, device=device, vae_class=OmniAutoencoderKLWan)
block = vae.decoder.up_blocks[1].resnets[0]
conv, norm = block.conv1, block.norm1
channels = conv.in_channels
height, width = (60, 104) if device == "cuda" else (8, 12)
generator = torch.Generator().manual_seed(0)
x = torch.randn(1, channels, frames, height, width, generator=generator).to(device, dtype)
padded = torch.randn(1, channels, frames + 2, height + 2, width + 2, generator=generator).to(device, dtype)
padded = padded.contiguous(memory_format=torch.channels_last_3d)
print(torch.__version__, device, model, tuple(x.shape))

with torch.no_grad():
    def chunks(fn, group):
        return torch.cat([fn(t, group) for t in range(0, frames, group)], 2)

    norm_of = lambda t, g: torch.linalg.vector_norm(x[:, :, t:t + g].float(), dim=1, keepdim=True)  # noqa: E731
    print("ATen channel norm:", equal_frames(chunks(norm_of, 10), chunks(norm_of, 2)))

    conv_of = lambda t, g: F.conv3d(padded[:, :, t:t + g + 2], conv.weight.contiguous(  # noqa: E731
        memory_format=torch.channels_last_3d))
    print("conv alone (channels-last):", equal_frames(chunks(conv_of, 10), chunks(conv_of, 2)))

    def step(group):
        cache = [None] * 4
        return torch.cat([norm_act_conv(norm, block.nonlinearity, None, conv, x[:, :, t:t + group].contiguous(), cache,
                                        [0], True) for t in range(0, frames, group)], 2)

    step(10), step(2)  # the conv checks of both geometries first
    print("norm, SiLU, pad, conv (decoder):", equal_frames(step(10), step(2)))
