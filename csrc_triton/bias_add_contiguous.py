"""``x + bias`` over channels, read in any layout and written contiguous (NCDHW).

A convolution fed channels_last_3d input returns channels-last output; stock
diffusers' NCDHW convolution returns the same values transposed, then adds the
bias in place. This kernel does the transposition and the bias add in one pass:
each program owns a (channels x width) tile of one (batch, frame, row) line (of LINES
lines under the interpreter), reads it along the input's fastest dimension and writes
it along width. The add is done in fp32 and rounded once, as ATen's add does. With a
residual (a residual block's shortcut, read through its own strides) the rounded sum
gets it added and is rounded again: stock's bias add_, then its ``x + shortcut``, without the second pass. With
HAS_RESIDUAL_BIAS the residual is itself a conv's raw output (the block's 1x1x1 shortcut
conv) and gets that conv's bias added first, rounded as stock's ``add_`` on it rounds.
With DupUp3D factors the residual is a DupUp3D source, read through its index map: the
conv before a Wan2.2 up block's DupUp3D shortcut adds its bias and the shortcut in one pass.
With FRAME_GROUPS > 1 (no residual) the channels are that many groups whose frames interleave
in the output: channel ``i * C' + c`` of frame ``t`` is written to channel ``c``, frame
``FRAME_GROUPS * t + i`` (C' = channels / FRAME_GROUPS), the layout a Wan temporal upsampler's
stack of its time conv's two halves gives.

``bias_add_norm_kernel`` does the same adds and also writes the fp32 L2 norm over
channels of each output column, in ``channel_norm_kernel``'s unsplit order (ATen's CUDA order for
the geometries ``kernel_norm_is_atens`` accepts): the next norm's reduction without reading the
output again. Each program owns BLOCK_W columns of one line and walks every channel, GROUPS x 16
per step, holding the 16 (thread, accumulator) partial sums of its columns.
"""

import triton
import triton.language as tl

from .channel_norm import block_sum_of
from .indexing import dup_up3d_source_offset, line_tile_program, split_line
from .rounding import round_to


@triton.jit
def epilogue_sum(values, bias, residual, residual_bias, dtype: tl.constexpr, HAS_RESIDUAL: tl.constexpr,
                 HAS_RESIDUAL_BIAS: tl.constexpr):
    """``(values + bias) [+ (residual [+ residual_bias])]`` from fp32 operands, each add rounded to dtype as ATen's."""
    total = round_to(values + bias, dtype)
    if HAS_RESIDUAL:
        if HAS_RESIDUAL_BIAS:
            residual = round_to(residual + residual_bias, dtype)
        total = round_to(total + residual, dtype)
    return total


# Line and grid sizes are not value-specialised: fewer variants to compile (see cat_pad_5d.py).
@triton.jit(do_not_specialize=["frames", "height", "num_lines", "c_blocks", "w_blocks", "height_magic",
                               "height_shift", "frames_magic", "frames_shift", "frame_offset"])
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
    num_lines,
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
    FRAME_GROUPS: tl.constexpr,
    INDEX64: tl.constexpr,
    BLOCK_C: tl.constexpr,
    BLOCK_W: tl.constexpr,
    LINES: tl.constexpr,
):
    line_group, c_block, w_block = line_tile_program(c_blocks, w_blocks)  # line: (b, t, h), h fastest
    if LINES == 1:
        line = line_group
        c = c_block * BLOCK_C + tl.arange(0, BLOCK_C)
    else:
        # Under the interpreter, whose cost is per program: LINES lines per program, with
        # (line, channel) pairs down the tile's rows.
        rows = tl.arange(0, LINES * BLOCK_C)
        line = line_group * LINES + rows // BLOCK_C
        c = c_block * BLOCK_C + rows % BLOCK_C
    w = w_block * BLOCK_W + tl.arange(0, BLOCK_W)
    h, t, b = split_line(line, height, height_magic, height_shift, frames, frames_magic, frames_shift)
    if LINES > 1:
        h, t, b = h[:, None], t[:, None], b[:, None]
    if INDEX64:
        h, t, b = h.to(tl.int64), t.to(tl.int64), b.to(tl.int64)
        c = c.to(tl.int64)
        w = w.to(tl.int64)
    # Compared after the int64 casts, as before LINES came: the GPU's LINES=1 code keeps its PTX (compare_ptx.py).
    channel_ok = c < channels
    if LINES > 1:
        channel_ok = channel_ok & (line < num_lines)
    active = channel_ok[:, None] & (w < width)[None, :]

    x_offset = b * x_sb + t * x_st + h * x_sh + c[:, None] * x_sc + w[None, :] * x_sw
    values = tl.load(x_ptr + x_offset, mask=active).to(tl.float32)
    bias = tl.load(bias_ptr + c, mask=channel_ok).to(tl.float32)[:, None]
    residual, residual_bias = values, bias
    if HAS_RESIDUAL:
        r_offset = dup_up3d_source_offset(b, c[:, None], t, h, w[None, :], frame_offset, r_sb, r_sc, r_st, r_sh, r_sw,
                                          FACTOR_T, FACTOR_S, REPEATS)
        residual = tl.load(residual_ptr + r_offset, mask=active).to(tl.float32)
        if HAS_RESIDUAL_BIAS:
            residual_bias = tl.load(residual_bias_ptr + c, mask=channel_ok).to(tl.float32)[:, None]
    total = epilogue_sum(values, bias, residual, residual_bias, out_ptr.dtype.element_ty, HAS_RESIDUAL,
                         HAS_RESIDUAL_BIAS)
    if FRAME_GROUPS == 1:
        out_offset = (((b * channels + c[:, None]) * frames + t) * height + h) * width + w[None, :]
    else:
        group_channels = channels // FRAME_GROUPS
        group = c[:, None] // group_channels
        out_channel = b * group_channels + c[:, None] - group * group_channels
        out_frame = t * FRAME_GROUPS + group
        out_offset = ((out_channel * (frames * FRAME_GROUPS) + out_frame) * height + h) * width + w[None, :]
    tl.store(out_ptr + out_offset, total.to(out_ptr.dtype.element_ty), mask=active)


@triton.jit
def add_group_squares(partial, total, GROUPS: tl.constexpr):
    """``partial`` (columns, 16) with the squares of ``total``'s (columns, GROUPS * 16) channels added, group by
    group in channel order, each lane's by one fma. GROUPS is 1, 2 or 4."""
    columns: tl.constexpr = total.shape[0]
    if GROUPS == 1:
        partial = tl.fma(total, total, partial)
    elif GROUPS == 2:
        first, second = tl.split(tl.permute(tl.reshape(total, (columns, 2, 16)), (0, 2, 1)))
        partial = tl.fma(second, second, tl.fma(first, first, partial))
    else:
        by_group = tl.permute(tl.reshape(total, (columns, GROUPS, 16)), (0, 2, 1))  # (columns, 16, group)
        even, odd = tl.split(tl.reshape(by_group, (columns, 16, 2, 2)))  # groups 0, 2 and 1, 3
        g0, g2 = tl.split(even)
        g1, g3 = tl.split(odd)
        partial = tl.fma(g3, g3, tl.fma(g2, g2, tl.fma(g1, g1, tl.fma(g0, g0, partial))))
    return partial


@triton.jit(do_not_specialize=["frames", "height", "w_blocks", "height_magic", "height_shift", "frames_magic",
                               "frames_shift", "frame_offset"])
def bias_add_norm_kernel(
    x_ptr,
    bias_ptr,
    out_ptr,
    norm_ptr,
    residual_ptr,
    residual_bias_ptr,
    channels,
    frames,
    height,
    width,
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
    GROUPS: tl.constexpr,
    BLOCK_W: tl.constexpr,
):
    line, _, w_block = line_tile_program(1, w_blocks)  # line: (b, t, h), h fastest
    h, t, b = split_line(line, height, height_magic, height_shift, frames, frames_magic, frames_shift)
    w = w_block * BLOCK_W + tl.arange(0, BLOCK_W)
    if INDEX64:
        h, t, b = h.to(tl.int64), t.to(tl.int64), b.to(tl.int64)
        w = w.to(tl.int64)
    w_ok = w < width
    x_line = b * x_sb + t * x_st + h * x_sh + w * x_sw
    plane = frames * height * width  # one channel of the contiguous output
    in_plane = (t * height + h) * width + w
    # Lane 4 * i + y of a 16-channel group is channel 4 * i + y, channel_norm_kernel's lane for thread y's
    # accumulator i with one block: each lane's fma chain takes its channels in the order ATen's thread does.
    partial = tl.zeros((BLOCK_W, 16), tl.float32)
    for step in range(0, channels, 16 * GROUPS):
        c = step + tl.arange(0, 16 * GROUPS)
        if INDEX64:
            c = c.to(tl.int64)
        active = w_ok[:, None] & (c < channels)[None, :]
        values = tl.load(x_ptr + x_line[:, None] + c[None, :] * x_sc, mask=active).to(tl.float32)
        bias = tl.load(bias_ptr + c, mask=c < channels).to(tl.float32)[None, :]
        residual, residual_bias = values, bias
        if HAS_RESIDUAL:
            r_offset = dup_up3d_source_offset(b, c[None, :], t, h, w[:, None], frame_offset, r_sb, r_sc, r_st, r_sh,
                                              r_sw, FACTOR_T, FACTOR_S, REPEATS)
            residual = tl.load(residual_ptr + r_offset, mask=active).to(tl.float32)
            if HAS_RESIDUAL_BIAS:
                residual_bias = tl.load(residual_bias_ptr + c, mask=c < channels).to(tl.float32)[None, :]
        total = epilogue_sum(values, bias, residual, residual_bias, out_ptr.dtype.element_ty, HAS_RESIDUAL,
                             HAS_RESIDUAL_BIAS).to(out_ptr.dtype.element_ty)
        tl.store(out_ptr + (b * channels * plane + in_plane)[:, None] + c[None, :] * plane, total, mask=active)
        # The stored value squared; a lane past the channels adds 0 * 0 and keeps its sum.
        partial = add_group_squares(partial, tl.where(active, total.to(tl.float32), 0.0), GROUPS)
    tl.store(norm_ptr + b * plane + in_plane, tl.sqrt_rn(block_sum_of(partial)), mask=w_ok)
