"""``x + bias`` over channels, read in any layout and written contiguous (NCDHW).

A convolution fed channels_last_3d input returns channels-last output; stock
diffusers' NCDHW convolution returns the same values transposed, then adds the
bias in place. This kernel does the transposition and the bias add in one pass:
each program owns a (channels x width) tile of one (batch, frame, row) line, reads
it along the input's fastest dimension and writes it along width. The add is done
in fp32 and rounded once, as ATen's add does. With a residual (a residual block's
shortcut, read through its own strides) the rounded sum gets it added and is rounded
again: stock's bias add_, then its ``x + shortcut``, without the second pass. With
HAS_RESIDUAL_BIAS the residual is itself a conv's raw output (the block's 1x1x1 shortcut
conv) and gets that conv's bias added first, rounded as stock's ``add_`` on it rounds.
With DupUp3D factors the residual is a DupUp3D source, read through its index map: the
conv before a Wan2.2 up block's DupUp3D shortcut adds its bias and the shortcut in one pass.
"""

import triton
import triton.language as tl

from .indexing import dup_up3d_source_offset, line_tile_program, split_line
from .rounding import round_to


# Line and grid sizes are not value-specialised: fewer variants to compile (see cat_pad_5d.py).
@triton.jit(do_not_specialize=["frames", "height", "c_blocks", "w_blocks", "height_magic", "height_shift",
                               "frames_magic", "frames_shift", "frame_offset"])
def bias_add_contiguous_kernel(
    x_ptr,
    bias_ptr,
    out_ptr,
    residual_ptr,
    residual_bias_ptr,
    channels,
    frames,
    height,
    width,
    c_blocks,
    w_blocks,
    height_magic,
    height_shift,
    frames_magic,
    frames_shift,
    frame_offset,
    x_sb, x_sc, x_st, x_sh, x_sw,
    r_sb, r_sc, r_st, r_sh, r_sw,
    HAS_RESIDUAL: tl.constexpr,
    HAS_RESIDUAL_BIAS: tl.constexpr,
    FACTOR_T: tl.constexpr,
    FACTOR_S: tl.constexpr,
    REPEATS: tl.constexpr,
    INDEX64: tl.constexpr,
    BLOCK_C: tl.constexpr,
    BLOCK_W: tl.constexpr,
):
    line, c_block, w_block = line_tile_program(c_blocks, w_blocks)  # line: (b, t, h), h fastest
    c = c_block * BLOCK_C + tl.arange(0, BLOCK_C)
    w = w_block * BLOCK_W + tl.arange(0, BLOCK_W)
    h, t, b = split_line(line, height, height_magic, height_shift, frames, frames_magic, frames_shift)
    if INDEX64:
        h, t, b = h.to(tl.int64), t.to(tl.int64), b.to(tl.int64)
        c = c.to(tl.int64)
        w = w.to(tl.int64)
    active = (c < channels)[:, None] & (w < width)[None, :]

    x_offset = b * x_sb + t * x_st + h * x_sh + c[:, None] * x_sc + w[None, :] * x_sw
    values = tl.load(x_ptr + x_offset, mask=active).to(tl.float32)
    bias = tl.load(bias_ptr + c, mask=c < channels).to(tl.float32)
    total = round_to(values + bias[:, None], out_ptr.dtype.element_ty)
    if HAS_RESIDUAL:
        r_offset = dup_up3d_source_offset(b, c[:, None], t, h, w[None, :], frame_offset, r_sb, r_sc, r_st, r_sh, r_sw,
                                          FACTOR_T, FACTOR_S, REPEATS)
        residual = tl.load(residual_ptr + r_offset, mask=active).to(tl.float32)
        if HAS_RESIDUAL_BIAS:
            residual_bias = tl.load(residual_bias_ptr + c, mask=c < channels).to(tl.float32)
            residual = round_to(residual + residual_bias[:, None], out_ptr.dtype.element_ty)
        total = round_to(total + residual, out_ptr.dtype.element_ty)
    out_offset = (((b * channels + c[:, None]) * frames + t) * height + h) * width + w[None, :]
    tl.store(out_ptr + out_offset, total.to(out_ptr.dtype.element_ty), mask=active)
