"""Session 43 probe: the 1024-channel DupUp3D upsampler epilogue (Wan2.2 bf16 480x832, 4x120x208 from 2x60x104)
writing its output's norm in ATen's block-split order (bias_add_contiguous_norm's norm_ctas), against
bias_add_contiguous plus ATen's norm; every tile checked against ATen's bits. Also the 512-channel launch (unsplit).

    python .gpu/s43_split.py
"""

from __future__ import annotations

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from diffusers.models.autoencoders.autoencoder_kl_wan import DupUp3D  # noqa: E402

import torch_wanops  # noqa: E402,F401
from torch_wanops import _backend  # noqa: E402
from torch_wanops.bench import median_ms  # noqa: E402
from torch_wanops.ops import bias_add_contiguous, bias_add_contiguous_norm  # noqa: E402
from torch_wanops.ops.rms_norm_cat_pad_5d import _channel_norm, chunk_ctas, kernel_norm_is_atens  # noqa: E402

CASES = [((1, 1024, 2, 60, 104), 1024, 2, False), ((1, 1024, 2, 60, 104), 1024, 2, True),
         ((1, 1024, 2, 120, 208), 512, 1, False)]
TILES = [None, (32, 4), (64, 4), (64, 8), (128, 8), (32, 2)]


def main() -> None:
    gen = torch.Generator().manual_seed(0)
    default_tile = _backend.norm_epilogue_tile
    for source_shape, out_channels, factor_t, drop_first in CASES:
        module = DupUp3D(source_shape[1], out_channels, factor_t=factor_t, factor_s=2)
        source = torch.randn(source_shape, generator=gen).to("cuda", torch.bfloat16)
        batch, channels, frames, height, width = module(source, first_chunk=drop_first).shape
        x = torch.randn((batch * frames, channels, height, width), generator=gen).to("cuda", torch.bfloat16)
        x = x.contiguous(memory_format=torch.channels_last).view(batch, frames, channels, height, width).permute(
            0, 2, 1, 3, 4)
        bias = torch.randn(channels, generator=gen).to("cuda", torch.bfloat16)
        dup = dict(dup_factor_t=factor_t, dup_factor_s=2, dup_repeats=module.repeats, dup_drop_first=drop_first)
        ref = bias_add_contiguous(x, bias, source, **dup)
        ctas = chunk_ctas(ref, 0)
        aten = _channel_norm(ref)
        plain = median_ms(lambda: bias_add_contiguous(x, bias, source, **dup), "cuda")
        reduce = median_ms(lambda: _channel_norm(ref), "cuda")
        print(f"{tuple(ref.shape)} drop_first={drop_first} ctas={ctas} kernel_norm_is_atens="
              f"{kernel_norm_is_atens(ref)}: bias_add {plain:.4f} + ATen norm {reduce:.4f} = {plain + reduce:.4f} ms",
              flush=True)
        for tile in TILES:
            if tile is not None:
                _backend.norm_epilogue_tile = lambda c, w, d=False, k=1, tile=tile: (tile[0], default_tile(
                    c, w, d, k)[1], tile[1])
            out, norm = bias_add_contiguous_norm(x, bias, source, **dup, norm_ctas=ctas)
            same = torch.equal(out, ref) and torch.equal(norm, aten)
            ms = median_ms(lambda: bias_add_contiguous_norm(x, bias, source, **dup, norm_ctas=ctas), "cuda")
            print(f"   tile {tile or 'default'}: {'same bits as ATen' if same else 'DIFFERENT'} {ms:.4f} ms",
                  flush=True)
            _backend.norm_epilogue_tile = default_tile


if __name__ == "__main__":
    main()
