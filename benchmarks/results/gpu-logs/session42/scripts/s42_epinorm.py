"""Session 42 probe: conv2's bias epilogue (bias + residual, transposed to NCDHW) that also writes the
next norm's fp32 channel norm of its output, in channel_norm_kernel's order (ATen's, unsplit).

Each program owns BLOCK_W columns of one (batch, frame, row) line and walks all channels, GROUPS x 16
per step (16 lanes: thread c % 4, accumulator (c // 4) % 4), so ATen's separate reduction of the block
output (one more read of it) goes. Compared with bias_add_contiguous + ATen's vector_norm, and timed.

    python .gpu/s42_epinorm.py                 # GPU
    TRITON_INTERPRET=1 python .gpu/s42_epinorm.py --cpu
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from csrc_triton.channel_norm import tree_of_four  # noqa: E402
from csrc_triton.rounding import round_to  # noqa: E402


@triton.jit
def epilogue_norm_kernel(
    x_ptr, bias_ptr, residual_ptr, out_ptr, norm_ptr,
    channels, frames, height, width,
    x_sb, x_sc, x_st, x_sh, x_sw,
    r_sb, r_sc, r_st, r_sh, r_sw,
    GROUPS: tl.constexpr, BLOCK_W: tl.constexpr,
):
    line = tl.program_id(1)
    h = line % height
    t = (line // height) % frames
    b = line // (height * frames)
    w = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    w_ok = w < width
    c_step = tl.arange(0, 16 * GROUPS)
    partial = tl.zeros((BLOCK_W, 16), tl.float32)
    for step in range(0, channels, 16 * GROUPS):
        c = step + c_step
        mask = w_ok[:, None] & (c < channels)[None, :]
        raw = tl.load(x_ptr + b * x_sb + t * x_st + h * x_sh + w[:, None] * x_sw + c[None, :] * x_sc, mask=mask,
                      other=0.0).to(tl.float32)
        bias = tl.load(bias_ptr + c, mask=c < channels, other=0.0).to(tl.float32)
        total = round_to(raw + bias[None, :], out_ptr.dtype.element_ty)
        residual = tl.load(residual_ptr + b * r_sb + t * r_st + h * r_sh + w[:, None] * r_sw + c[None, :] * r_sc,
                           mask=mask, other=0.0).to(tl.float32)
        total = round_to(total + residual, out_ptr.dtype.element_ty)
        out_offset = (((b * channels + c[None, :]) * frames + t) * height + h) * width + w[:, None]
        tl.store(out_ptr + out_offset, total.to(out_ptr.dtype.element_ty), mask=mask)
        total = tl.where(mask, total, 0.0)
        if GROUPS == 1:
            partial = tl.fma(total, total, partial)
        else:
            # (BLOCK_W, GROUPS, 16) -> groups in channel order, each 16 channels' lanes.
            by_group = tl.permute(tl.reshape(total, (BLOCK_W, GROUPS, 16)), (0, 2, 1))
            if GROUPS == 2:
                g0, g1 = tl.split(by_group)
                partial = tl.fma(g0, g0, partial)
                partial = tl.fma(g1, g1, partial)
            else:
                even, odd = tl.split(tl.reshape(by_group, (BLOCK_W, 16, 2, 2)))
                g0, g2 = tl.split(even)
                g1, g3 = tl.split(odd)
                partial = tl.fma(g0, g0, partial)
                partial = tl.fma(g1, g1, partial)
                partial = tl.fma(g2, g2, partial)
                partial = tl.fma(g3, g3, partial)
    by_thread = tl.reshape(tl.permute(tl.reshape(partial, (BLOCK_W, 4, 4)), (0, 2, 1)), (BLOCK_W, 4, 2, 2))
    even, odd = tl.split(by_thread)
    a0, a2 = tl.split(even)
    a1, a3 = tl.split(odd)
    column = (b * frames + t) * height * width + h * width + w
    tl.store(norm_ptr + column, tl.sqrt_rn(tree_of_four(((a0 + a1) + a2) + a3)), mask=w_ok)


def epilogue_norm(raw, bias, residual, block_w, groups, warps):
    bsz, channels, frames, height, width = raw.shape
    out = torch.empty(raw.shape, dtype=raw.dtype, device=raw.device)
    norm = torch.empty((bsz, 1, frames, height, width), dtype=torch.float32, device=raw.device)
    grid = (triton.cdiv(width, block_w), bsz * frames * height)
    epilogue_norm_kernel[grid](raw, bias, residual, out, norm, channels, frames, height, width,
                               *raw.stride(), *residual.stride(), GROUPS=groups, BLOCK_W=block_w, num_warps=warps)
    return out, norm


SHAPES = [
    (1, 256, 4, 240, 416), (1, 512, 4, 120, 208), (1, 96, 4, 480, 832), (1, 192, 4, 240, 416),
    (1, 384, 4, 120, 208), (1, 512, 4, 240, 416),
]
TILES = [(32, 1, 4), (64, 1, 4), (32, 2, 4), (64, 2, 4), (32, 4, 4), (64, 4, 8), (128, 1, 4), (128, 2, 8),
         (16, 4, 4), (64, 1, 2), (32, 1, 2)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    from torch_wanops.bench import median_ms
    from torch_wanops.ops import bias_add_contiguous
    from torch_wanops.ops.rms_norm_cat_pad_5d import launch_channel_norm

    device = "cpu" if args.cpu else "cuda"
    shapes = [(2, 48, 3, 5, 37), (1, 32, 2, 3, 64), (2, 128, 2, 3, 21)] if args.cpu else SHAPES
    tiles = [(16, 1, 4), (16, 2, 4), (32, 1, 4), (16, 4, 4)] if args.cpu else TILES
    if not args.cpu:
        print(torch.__version__, triton.__version__, torch.cuda.get_device_name())
    gen = torch.Generator().manual_seed(0)
    for shape in shapes:
        raw = torch.randn(shape, generator=gen).to(device, torch.bfloat16).contiguous(
            memory_format=torch.channels_last_3d)
        residual = torch.randn(shape, generator=gen).to(device, torch.bfloat16)
        bias = torch.randn(shape[1], generator=gen).to(device, torch.bfloat16)
        ref = bias_add_contiguous(raw, bias, residual)
        ref_norm = launch_channel_norm(ref)
        line = f"{shape}:"
        if not args.cpu:
            aten_norm = torch.linalg.vector_norm(ref, dim=1, keepdim=True, dtype=torch.float32)
            line += f" kernel norm == ATen {torch.equal(ref_norm, aten_norm)};"
            ms_epi = median_ms(lambda: bias_add_contiguous(raw, bias, residual), device)
            ms_norm = median_ms(lambda: torch.linalg.vector_norm(ref, dim=1, keepdim=True, dtype=torch.float32),
                                device)
            line += f" bias_add {ms_epi:.4f} + ATen norm {ms_norm:.4f} = {ms_epi + ms_norm:.4f} ms"
        print(line, flush=True)
        for tile in tiles:
            if shape[1] % (16 * tile[1]):
                continue
            out, norm = epilogue_norm(raw, bias, residual, *tile)
            same = torch.equal(out, ref) and torch.equal(norm, ref_norm)
            row = f"   tile {tile}: {'same bits' if same else 'DIFFERENT'}"
            if not args.cpu:
                row += f" {median_ms(lambda: epilogue_norm(raw, bias, residual, *tile), device):.4f} ms"
            print(row, flush=True)


if __name__ == "__main__":
    main()
