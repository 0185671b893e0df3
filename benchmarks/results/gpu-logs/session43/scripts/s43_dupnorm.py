"""Session 43 probe (prepared in session 42, not yet run on a GPU): a Wan2.2 upsampler Conv2d's bias epilogue with
its DupUp3D shortcut (bias_add_contiguous with DupUp3D factors) that also writes its output's channel norm in the
norm kernel's unsplit order, as bias_add_norm_kernel does for conv2's epilogues. Compared with bias_add_contiguous
(+ DupUp3D) and launch_channel_norm, and timed against bias_add_contiguous's DupUp3D tile plus ATen's reduction.

    python .gpu/s43_dupnorm.py                       # GPU
    TRITON_INTERPRET=1 python .gpu/s43_dupnorm.py --cpu
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402,F401  (importing registers the ops)
from torch_wanops import _backend  # noqa: E402
from torch_wanops.csrc_triton.bias_add_contiguous import add_group_squares, epilogue_sum  # noqa: E402
from torch_wanops.csrc_triton.channel_norm import block_sum_of  # noqa: E402
from torch_wanops.csrc_triton.indexing import dup_up3d_source_offset, line_tile_program, split_line  # noqa: E402


# Not value-specialised, as bias_add_norm_kernel (frames == 1 would turn frames_magic into a Python int).
@triton.jit(do_not_specialize=["frames", "height", "w_blocks", "height_magic", "height_shift", "frames_magic",
                               "frames_shift", "frame_offset"])
def dup_norm_kernel(
    x_ptr, bias_ptr, out_ptr, norm_ptr, source_ptr,
    channels, frames, height, width, w_blocks, height_magic, height_shift, frames_magic, frames_shift, frame_offset,
    x_sb, x_sc, x_st, x_sh, x_sw, s_sb, s_sc, s_st, s_sh, s_sw,
    FACTOR_T: tl.constexpr, FACTOR_S: tl.constexpr, REPEATS: tl.constexpr, GROUPS: tl.constexpr,
    BLOCK_W: tl.constexpr,
):
    line, _, w_block = line_tile_program(1, w_blocks)
    h, t, b = split_line(line, height, height_magic, height_shift, frames, frames_magic, frames_shift)
    w = w_block * BLOCK_W + tl.arange(0, BLOCK_W)
    w_ok = w < width
    x_line = b * x_sb + t * x_st + h * x_sh + w * x_sw
    plane = frames * height * width
    in_plane = (t * height + h) * width + w
    partial = tl.zeros((BLOCK_W, 16), tl.float32)
    for step in range(0, channels, 16 * GROUPS):
        c = step + tl.arange(0, 16 * GROUPS)
        active = w_ok[:, None] & (c < channels)[None, :]
        values = tl.load(x_ptr + x_line[:, None] + c[None, :] * x_sc, mask=active).to(tl.float32)
        bias = tl.load(bias_ptr + c, mask=c < channels).to(tl.float32)[None, :]
        offset = dup_up3d_source_offset(b, c[None, :], t, h, w[:, None], frame_offset, s_sb, s_sc, s_st, s_sh, s_sw,
                                        FACTOR_T, FACTOR_S, REPEATS)
        residual = tl.load(source_ptr + offset, mask=active).to(tl.float32)
        total = epilogue_sum(values, bias, residual, bias, out_ptr.dtype.element_ty, True, False).to(
            out_ptr.dtype.element_ty)
        tl.store(out_ptr + (b * channels * plane + in_plane)[:, None] + c[None, :] * plane, total, mask=active)
        partial = add_group_squares(partial, tl.where(active, total.to(tl.float32), 0.0), GROUPS)
    tl.store(norm_ptr + b * plane + in_plane, tl.sqrt_rn(block_sum_of(partial)), mask=w_ok)


def dup_norm(x, bias, source, factor_t, factor_s, repeats, drop_first, block_w, groups, warps):
    batch, channels, frames, height, width = x.shape
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    norm = torch.empty((batch, 1, frames, height, width), dtype=torch.float32, device=x.device)
    w_blocks = triton.cdiv(width, block_w)
    grid = _backend.line_tile_grid(batch * frames * height, 1, w_blocks)
    dup_norm_kernel[grid](
        x, bias, out, norm, source, channels, frames, height, width, w_blocks, *_backend.division_magic(height),
        *_backend.division_magic(frames), factor_t - 1 if drop_first else 0, *x.stride(), *source.stride(),
        FACTOR_T=factor_t, FACTOR_S=factor_s, REPEATS=repeats, GROUPS=groups, BLOCK_W=block_w, num_warps=warps)
    return out, norm


# (source shape, out channels, factor_t) of Wan2.2 bf16 480x832's DupUp3D epilogues (tests/test_bias_add_contiguous.py)
CASES = [((1, 1024, 2, 120, 208), 512, 1), ((1, 1024, 2, 60, 104), 1024, 2)]
TILES = [(32, 4, 4), (64, 4, 8), (32, 2, 4), (64, 2, 4), (16, 4, 4)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    from diffusers.models.autoencoders.autoencoder_kl_wan import DupUp3D

    from torch_wanops.bench import median_ms
    from torch_wanops.ops import bias_add_contiguous
    from torch_wanops.ops.rms_norm_cat_pad_5d import launch_channel_norm

    device = "cpu" if args.cpu else "cuda"
    cases = [((1, 128, 1, 3, 5), 64, 1), ((2, 128, 2, 2, 3), 128, 2)] if args.cpu else CASES
    tiles = [(8, 4, 4), (16, 2, 4)] if args.cpu else TILES
    gen = torch.Generator().manual_seed(0)
    for source_shape, out_channels, factor_t in cases:
        for drop_first in (False, True):
            module = DupUp3D(source_shape[1], out_channels, factor_t=factor_t, factor_s=2)
            source = torch.randn(source_shape, generator=gen).to(device, torch.bfloat16)
            shape = module(source, first_chunk=drop_first).shape
            x = torch.randn(shape, generator=gen).to(device, torch.bfloat16).contiguous(
                memory_format=torch.channels_last_3d)
            bias = torch.randn(out_channels, generator=gen).to(device, torch.bfloat16)
            dup = dict(dup_factor_t=factor_t, dup_factor_s=2, dup_repeats=module.repeats, dup_drop_first=drop_first)
            ref = bias_add_contiguous(x, bias, source, **dup)
            ref_norm = launch_channel_norm(ref, ctas=1)
            line = f"{tuple(shape)} from {source_shape} drop_first={drop_first}:"
            if not args.cpu:
                epilogue = median_ms(lambda: bias_add_contiguous(x, bias, source, **dup), device)
                aten = median_ms(lambda: torch.linalg.vector_norm(ref, dim=1, keepdim=True, dtype=torch.float32),
                                 device)
                line += f" bias_add (DupUp3D) {epilogue:.4f} + ATen norm {aten:.4f} = {epilogue + aten:.4f} ms"
            print(line, flush=True)
            for tile in tiles:
                got, norm = dup_norm(x, bias, source, factor_t, 2, module.repeats, drop_first, *tile)
                same = torch.equal(got, ref) and torch.equal(norm, ref_norm)
                row = f"   tile {tile}: {'same bits' if same else 'DIFFERENT'}"
                if not args.cpu:
                    row += " {:.4f} ms".format(median_ms(
                        lambda: dup_norm(x, bias, source, factor_t, 2, module.repeats, drop_first, *tile), device))
                print(row, flush=True)


if __name__ == "__main__":
    main()
