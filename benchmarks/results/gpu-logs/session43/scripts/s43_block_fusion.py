"""Session 43 probe (run in H): a residual block's conv2 bias epilogue that also
builds the next block's first conv input, the "one-pass block fusion" of levers.md.

Today a block boundary is two passes: ``bias_add_contiguous_norm`` (conv2's raw channels-last output + bias +
shortcut, written NCDHW as the block output, with its channel norm) and the next block's
``rms_norm_cat_pad_5d(out, ..., x_norm=norm)`` (reads the block output again, normalizes, SiLU, writes the padded
channels-last conv input and the next cache). Here one program holds BLOCK_W columns of a line: its first walk over
the channels is bias_add_norm_kernel's (the block output and the norm in the same order), its second re-reads the
values it stored (from L2) and writes them normalized into the padded conv input's interior and the next cache. The
cached frames and the zero border of the conv input are left to a copy of the cache (timed here as
``cat_pad_5d`` of the two cached frames with the spatial border). Chunks of at least two frames only (the next cache
is then all new frames): a first chunk's one frame would keep the old path.

    python .gpu/s43_block_fusion.py                       # GPU: bits and times at Wan2.2's / Wan2.1's shapes
    TRITON_INTERPRET=1 python .gpu/s43_block_fusion.py --cpu
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
from torch_wanops.csrc_triton.cat_pad_5d import rms_norm_silu  # noqa: E402
from torch_wanops.csrc_triton.channel_norm import block_sum_of  # noqa: E402
from torch_wanops.csrc_triton.indexing import line_tile_program, split_line  # noqa: E402


@triton.jit(do_not_specialize=["frames", "height", "w_blocks", "height_magic", "height_shift", "frames_magic",
                               "frames_shift", "cache_frames", "keep_from"])
def epilogue_pad_kernel(
    x_ptr, bias_ptr, out_ptr, residual_ptr, padded_ptr, keep_ptr, gamma_ptr, silu_table_ptr, scale,
    channels, frames, height, width, w_blocks, height_magic, height_shift, frames_magic, frames_shift,
    cache_frames, keep_from,
    x_sb, x_sc, x_st, x_sh, x_sw, r_sb, r_sc, r_st, r_sh, r_sw,
    p_sb, p_sc, p_st, p_sh, p_sw, k_sb, k_sc, k_st, k_sh, k_sw,
    SILU_TABLE: tl.constexpr, LIBDEVICE_EXP: tl.constexpr, GROUPS: tl.constexpr, BLOCK_W: tl.constexpr,
):
    line, _, w_block = line_tile_program(1, w_blocks)
    h, t, b = split_line(line, height, height_magic, height_shift, frames, frames_magic, frames_shift)
    w = w_block * BLOCK_W + tl.arange(0, BLOCK_W)
    w_ok = w < width
    x_line = b * x_sb + t * x_st + h * x_sh + w * x_sw
    r_line = b * r_sb + t * r_st + h * r_sh + w * r_sw
    plane = frames * height * width
    out_line = b * channels * plane + (t * height + h) * width + w
    dtype = out_ptr.dtype.element_ty
    partial = tl.zeros((BLOCK_W, 16), tl.float32)
    for step in range(0, channels, 16 * GROUPS):
        c = step + tl.arange(0, 16 * GROUPS)
        active = w_ok[:, None] & (c < channels)[None, :]
        values = tl.load(x_ptr + x_line[:, None] + c[None, :] * x_sc, mask=active).to(tl.float32)
        bias = tl.load(bias_ptr + c, mask=c < channels).to(tl.float32)[None, :]
        residual = tl.load(residual_ptr + r_line[:, None] + c[None, :] * r_sc, mask=active).to(tl.float32)
        total = epilogue_sum(values, bias, residual, bias, dtype, True, False).to(dtype)
        tl.store(out_ptr + out_line[:, None] + c[None, :] * plane, total, mask=active)
        partial = add_group_squares(partial, tl.where(active, total.to(tl.float32), 0.0), GROUPS)
    norm = tl.sqrt_rn(block_sum_of(partial))[:, None]
    tl.debug_barrier()  # the second walk reads what other threads of the program stored
    p_line = b * p_sb + (t + cache_frames) * p_st + (h + 1) * p_sh + (w + 1) * p_sw
    k_line = b * k_sb + (t - keep_from) * k_st + h * k_sh + w * k_sw
    # A tensor, not a scalar: the interpreter (3.9) turns a scalar boolean broadcast into int32, not a mask.
    keeps = (t + tl.zeros((BLOCK_W,), tl.int32) >= keep_from)[:, None]
    for step in range(0, channels, 16 * GROUPS):
        c = step + tl.arange(0, 16 * GROUPS)
        active = w_ok[:, None] & (c < channels)[None, :]
        total = tl.load(out_ptr + out_line[:, None] + c[None, :] * plane, mask=active).to(tl.float32)
        gamma = tl.load(gamma_ptr + c, mask=c < channels).to(tl.float32)[None, :]
        normalized = rms_norm_silu(total, norm, gamma, scale, silu_table_ptr, True, SILU_TABLE, LIBDEVICE_EXP,
                                   dtype).to(dtype)
        tl.store(padded_ptr + p_line[:, None] + c[None, :] * p_sc, normalized, mask=active)
        tl.store(keep_ptr + k_line[:, None] + c[None, :] * k_sc, normalized, mask=active & keeps)


def fused(x, bias, residual, gamma, scale, cache, keep_frames, block_w, groups, warps, table):
    """(block output, padded conv input, next cache): the kernel above, then the cached frames and the border."""
    batch, channels, frames, height, width = x.shape
    cache_frames = cache.shape[2]
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    padded = torch.empty((batch, channels, cache_frames + frames, height + 2, width + 2), dtype=x.dtype,
                         device=x.device, memory_format=torch.channels_last_3d)
    keep = torch.empty((batch, channels, keep_frames, height, width), dtype=x.dtype, device=x.device,
                       memory_format=torch.channels_last_3d)
    w_blocks = triton.cdiv(width, block_w)
    grid = _backend.line_tile_grid(batch * frames * height, 1, w_blocks)
    epilogue_pad_kernel[grid](
        x, bias, out, residual, padded, keep, gamma, table if table is not None else gamma, scale,
        channels, frames, height, width, w_blocks, *_backend.division_magic(height), *_backend.division_magic(frames),
        cache_frames, frames - keep_frames, *x.stride(), *residual.stride(), *padded.stride(), *keep.stride(),
        SILU_TABLE=table is not None, LIBDEVICE_EXP=not _backend.INTERPRETER, GROUPS=groups, BLOCK_W=block_w,
        num_warps=warps)
    border_and_cache(padded, cache)
    return out, padded, keep


def border_and_cache(padded, cache):
    """The rest of the conv input (a stand-in for a kernel that would write only these): the cached frames, padded,
    and the zero border of the new frames."""
    cache_frames = cache.shape[2]
    padded[:, :, :cache_frames] = torch_wanops.cat_pad_5d(cache, None, (1, 1, 1, 1, 0, 0), 0, True)[0]
    padded[:, :, cache_frames:, 0] = 0
    padded[:, :, cache_frames:, -1] = 0
    padded[:, :, cache_frames:, :, 0] = 0
    padded[:, :, cache_frames:, :, -1] = 0


# (channels, frames, height, width) of residual block boundaries: Wan2.2's full-resolution and 120x208 stages, Wan2.1's
# full resolution.
CASES = [(256, 4, 240, 416), (512, 4, 120, 208), (96, 4, 480, 832)]
TILES = [(32, 4), (64, 4), (32, 8), (64, 8)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    from torch_wanops.bench import median_ms
    from torch_wanops.ops import bias_add_contiguous_norm, rms_norm_cat_pad_5d
    from torch_wanops.ops.rms_norm_cat_pad_5d import silu_table

    device = "cpu" if args.cpu else "cuda"
    cases = [(64, 3, 3, 10), (96, 2, 2, 7), (20, 2, 3, 5)] if args.cpu else CASES
    tiles = [(8, 4)] if args.cpu else TILES
    gen = torch.Generator().manual_seed(0)
    dtype = torch.bfloat16
    for channels, frames, height, width in cases:
        shape = (1, channels, frames, height, width)
        x = (torch.randn(shape, generator=gen) * 4).to(device, dtype).contiguous(memory_format=torch.channels_last_3d)
        residual = (torch.randn(shape, generator=gen) * 4).to(device, dtype)
        bias = torch.randn(channels, generator=gen).to(device, dtype)
        gamma = (torch.rand(channels, generator=gen) + 0.5).to(device, dtype)
        scale = channels ** 0.5
        cache = torch.randn((1, channels, 2, height, width), generator=gen).to(device, dtype).contiguous(
            memory_format=torch.channels_last_3d)
        table = None if args.cpu else silu_table(device, dtype)

        def reference():
            out, norm = bias_add_contiguous_norm(x, bias, residual)
            padded, keep = rms_norm_cat_pad_5d(out, gamma.view(-1, 1, 1, 1), scale, True, cache, (1, 1, 1, 1, 2, 0), 2,
                                               True, None, False, 0, norm)
            return out, padded, keep

        expected = reference()
        line = f"{channels} ch {frames}x{height}x{width}:"
        if not args.cpu:
            line += f" two passes {median_ms(reference, device):.4f} ms"
            rest = median_ms(lambda: border_and_cache(expected[1].clone(), cache), device)
            line += f", of the fused path's rest (cached frames, border; a stand-in) {rest:.4f} ms"
        print(line, flush=True)
        groups = 4 if channels % 64 == 0 else 2 if channels % 32 == 0 else 1
        for block_w, warps in tiles:
            got = fused(x, bias, residual, gamma, scale, cache, 2, block_w, groups, warps, table)
            same = all(torch.equal(a, e) and a.stride() == e.stride() for a, e in zip(got, expected))
            row = f"   tile {block_w} columns, {warps} warps: {'same bits' if same else 'DIFFERENT'}"
            if not args.cpu:
                w_blocks = triton.cdiv(width, block_w)
                grid = _backend.line_tile_grid(frames * height, 1, w_blocks)
                out, padded, keep = got

                def kernel_only():
                    epilogue_pad_kernel[grid](
                        x, bias, out, residual, padded, keep, gamma, table, scale, channels, frames, height, width,
                        w_blocks, *_backend.division_magic(height), *_backend.division_magic(frames), 2, frames - 2,
                        *x.stride(), *residual.stride(), *padded.stride(), *keep.stride(), SILU_TABLE=True,
                        LIBDEVICE_EXP=True, GROUPS=groups, BLOCK_W=block_w, num_warps=warps)

                row += f", fused kernel {median_ms(kernel_only, device):.4f} ms"
            print(row, flush=True)


if __name__ == "__main__":
    main()
