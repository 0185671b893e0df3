"""Causal Conv3d input in one pass: zeros, cached frames, new frames, spatial zero border.

Each program owns a BLOCK_C x BLOCK_W (channels x width) tile of one output line
(batch, frame, row): the line's coordinates and padding tests are computed once per
program, and Triton coalesces each load and store along whichever of the two axes has stride 1
in that tensor (width for NCDHW, channels for channels_last_3d), so the same kernel
also transposes, e.g. NCDHW x into a channels-last output. All addressing goes
through explicit strides: any input views and any dense output layout work.

With NORM the new frames pass through WanRMS_norm (and SiLU with SILU) on their
way in: ``F.normalize(x, dim=1)`` from a precomputed fp32 channel norm, then
``* scale``, ``* gamma``, ``+ 0.0`` and SiLU, each rounded to the output dtype as
ATen's separate kernels round them (the launcher disables fp contraction). With
HAS_BIAS x is a conv's raw output and gets the conv's bias added first, rounded as
stock's ``add_`` rounds it. Cached frames are already normalized and are copied as they are.
With TF32_OUT (fp32) every value written to the conv input, cached frames included, is rounded to
the nearest TF32 value, ties to even, as cuDNN's TF32 convs round their operands; the next chunk's
cache keeps the values unrounded, as stock's does.

With X_ALIGNED a transposing tile's width blocks start on x's columns (block 0 holds the left padding), so rows
of an x whose strides are multiples of 16 load as vectors. With MERGE_FIRST (a transposing norm) the cached frames
are merged before the norm and gamma and bias are read as whole tiles, which leaves Triton one layout conversion;
a channels-last norm merges after, which measured faster (gpu-logs/session39). Neither changes a value.

With UPSAMPLE > 1 x is read nearest-upsampled by that factor in height and width
(``height``/``width`` are then the upsampled sizes): ``upsample_nearest_2x`` builds a
resampler's Conv2d input this way, with no norm, cache or kept frames.
"""

import triton
import triton.language as tl
from triton.language.extra import libdevice

from .indexing import line_tile_program, split_line
from .rounding import round_to, round_to_tf32_grid


@triton.jit
def rms_norm_silu(x, norm, gamma, scale, silu_table_ptr, SILU: tl.constexpr, SILU_TABLE: tl.constexpr,
                  LIBDEVICE_EXP: tl.constexpr, dtype: tl.constexpr):
    """Stock ``silu(F.normalize(x.float(), dim=1).to(dtype) * scale * gamma + 0.0)`` in fp32 registers."""
    # F.normalize: x / norm.clamp_min(1e-12), IEEE division (ATen is built without fast math).
    y = round_to(tl.math.div_rn(x, tl.where(norm < 1e-12, 1e-12, norm)), dtype)
    y = round_to(y * scale, dtype)
    y = round_to(y * gamma, dtype)
    y = y + 0.0  # the bias-free norm adds 0.0: -0.0 becomes +0.0, and stays on the grid
    if SILU and SILU_TABLE:
        # A 16-bit dtype has 65536 values: look up ATen's own SiLU of each by its bits.
        bits = y.to(dtype).to(tl.int16, bitcast=True).to(tl.int32) & 0xFFFF
        y = tl.load(silu_table_ptr + bits).to(tl.float32)
    elif SILU:
        # ATen's silu: x / (1 + expf(-x)). libdevice's expf is CUDA's; the interpreter has only tl.exp.
        if LIBDEVICE_EXP:
            e = libdevice.exp(-y)
        else:
            e = tl.exp(-y)
        y = round_to(tl.math.div_rn(y, 1.0 + e), dtype)
    return y


@triton.jit
def new_frames_line(row, frame, frames_before_x, pad_h, height):
    """Whether the output line at (frame, row) holds any of x's values."""
    ih = row - pad_h
    return (frame >= frames_before_x) & (ih >= 0) & (ih < height)


@triton.jit
def merge_cache(values, cache_ptr, inside, it, cache_frames, b, ih, c, iw,
                cache_sb, cache_sc, cache_st, cache_sh, cache_sw):
    """``values`` with the tile's cached frames put in."""
    from_cache = inside & (it >= 0) & (it < cache_frames)
    cache_offset = b * cache_sb + it * cache_st + ih * cache_sh + c * cache_sc + iw * cache_sw
    return tl.where(from_cache, tl.load(cache_ptr + cache_offset, mask=from_cache, other=0), values)


# Sizes that only index lines or the launch grid are not specialised on their values (== 1, % 16): a first
# Wan2.2 decode compiles 39 kernel variants instead of 69 (gpu-logs/session28/C). The strides and the sizes
# that mask a tile's fast axis, which vectorisation needs, stay specialised.
@triton.jit(do_not_specialize=["height", "cache_frames", "out_frames", "out_height", "zero_frames", "pad_h",
                               "keep_frames", "num_lines", "c_blocks", "w_blocks", "out_height_magic",
                               "out_height_shift", "out_frames_magic", "out_frames_shift"])
def cat_pad_5d_kernel(
    x_ptr,
    cache_ptr,
    out_ptr,
    keep_ptr,
    norm_ptr,
    gamma_ptr,
    silu_table_ptr,
    bias_ptr,
    scale,
    channels,
    height,
    width,
    cache_frames,
    out_frames,
    out_height,
    out_width,
    zero_frames,
    pad_h,
    pad_w,
    keep_frames,
    num_lines,
    c_blocks,
    w_blocks,
    out_height_magic,
    out_height_shift,
    out_frames_magic,
    out_frames_shift,
    x_sb, x_sc, x_st, x_sh, x_sw,
    cache_sb, cache_sc, cache_st, cache_sh, cache_sw,
    out_sb, out_sc, out_st, out_sh, out_sw,
    keep_sb, keep_sc, keep_st, keep_sh, keep_sw,
    norm_sb, norm_st, norm_sh, norm_sw,
    HAS_CACHE: tl.constexpr,
    HAS_KEEP: tl.constexpr,
    INDEX64: tl.constexpr,
    NORM: tl.constexpr,
    SILU: tl.constexpr,
    SILU_TABLE: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    TF32_OUT: tl.constexpr,
    LIBDEVICE_EXP: tl.constexpr,
    BLOCK_C: tl.constexpr,
    BLOCK_W: tl.constexpr,
    LINES: tl.constexpr,
    UPSAMPLE: tl.constexpr,
    X_ALIGNED: tl.constexpr,
    MERGE_FIRST: tl.constexpr,
):
    # The (batch, frame, row) coordinates are per program, so most index math is done
    # once per thread. A (1, 1) tensor, not a scalar: Triton's interpreter (3.9) turns a
    # scalar boolean broadcast against a tensor into int32, which tl.load rejects as a mask.
    line_group, c_block, w_block = line_tile_program(c_blocks, w_blocks)
    if LINES == 1:
        line_row, line_frame, line_batch = split_line(line_group, out_height, out_height_magic, out_height_shift,
                                                      out_frames, out_frames_magic, out_frames_shift)
        zero = tl.zeros((1, 1), tl.int32)
        oh, ot, b = line_row + zero, line_frame + zero, line_batch + zero
        c = c_block * BLOCK_C + tl.arange(0, BLOCK_C)[:, None]
    else:
        # Under the interpreter, whose cost is per program: LINES lines per program, with
        # (line, channel) pairs down the tile's rows.
        rows = tl.arange(0, LINES * BLOCK_C)[:, None]
        line = line_group * LINES + rows // BLOCK_C
        c = c_block * BLOCK_C + rows % BLOCK_C
        oh, ot, b = split_line(line, out_height, out_height_magic, out_height_shift,
                               out_frames, out_frames_magic, out_frames_shift)
    if X_ALIGNED:
        # Width tiles start on x's columns (block 0 holds the left padding): from a row-major x whose rows start
        # 16-element aligned, a thread's columns load as one vector instead of one element each.
        iw = (w_block - 1) * BLOCK_W + tl.arange(0, BLOCK_W)[None, :]
        ow = iw + pad_w
    else:
        ow = w_block * BLOCK_W + tl.arange(0, BLOCK_W)[None, :]
        iw = ow - pad_w
    if INDEX64:
        oh, ot, b = oh.to(tl.int64), ot.to(tl.int64), b.to(tl.int64)
        c = c.to(tl.int64)
        ow, iw = ow.to(tl.int64), iw.to(tl.int64)

    ih = oh - pad_h
    it = ot - zero_frames
    x_frame = it - cache_frames
    line_inside = (ih >= 0) & (ih < height)
    columns_inside = (iw >= 0) & (iw < width)  # (1, BLOCK_W); ow < out_width follows
    channel_ok = c < channels
    if LINES > 1:
        channel_ok = channel_ok & (line < num_lines)
    active = channel_ok & (ow < out_width)
    if X_ALIGNED:
        active = active & (ow >= 0)
    inside = channel_ok & columns_inside & line_inside

    from_x = inside & (x_frame >= 0)
    if UPSAMPLE > 1:
        # Nearest: upsampled pixel (ih, iw) is x's pixel (ih // UPSAMPLE, iw // UPSAMPLE).
        x_offset = b * x_sb + x_frame * x_st + (ih // UPSAMPLE) * x_sh + c * x_sc + (iw // UPSAMPLE) * x_sw
    else:
        x_offset = b * x_sb + x_frame * x_st + ih * x_sh + c * x_sc + iw * x_sw
    values = tl.load(x_ptr + x_offset, mask=from_x, other=0)
    if HAS_CACHE:
        if MERGE_FIRST:
            values = merge_cache(values, cache_ptr, inside, it, cache_frames, b, ih, c, iw,
                                 cache_sb, cache_sc, cache_st, cache_sh, cache_sw)
    if NORM:
        if LINES == 1:
            # A line of cached frames or of the zero border (a third of a later chunk's lines) skips the
            # norm's arithmetic, which bounds the kernel's time: its values come from the cache or are 0.
            computes_norm = new_frames_line(line_row, line_frame, zero_frames + cache_frames, pad_h, height)
        else:
            computes_norm = line_group >= 0  # the interpreter's programs hold several lines
        if computes_norm:
            # One norm per column and one gamma (bias) per channel, each loaded once per tile.
            norm_offset = b * norm_sb + x_frame * norm_st + ih * norm_sh + iw * norm_sw
            norm = tl.load(norm_ptr + norm_offset, mask=columns_inside & line_inside & (x_frame >= 0), other=1.0)
            if MERGE_FIRST:
                # Gamma and bias read as whole tiles: from NCDHW x into a channels-last output Triton (3.6) then
                # converts the tile's layout once, after the loads, not four times.
                channel, channel_mask = c + 0 * ow, channel_ok & columns_inside
            else:
                channel, channel_mask = c, c < channels
            gamma = tl.load(gamma_ptr + channel, mask=channel_mask, other=0).to(tl.float32)
            normalized = values.to(tl.float32)  # x's values: a line of x's frames holds no cached ones
            if HAS_BIAS:
                bias = tl.load(bias_ptr + channel, mask=channel_mask, other=0).to(tl.float32)
                normalized = round_to(normalized + bias, out_ptr.dtype.element_ty)
            normalized = rms_norm_silu(normalized, norm, gamma, scale, silu_table_ptr, SILU, SILU_TABLE,
                                       LIBDEVICE_EXP, out_ptr.dtype.element_ty)
            if MERGE_FIRST and LINES > 1:
                # The interpreter's several-line programs keep the cached values merged above.
                values = tl.where(from_x, normalized, values.to(tl.float32)).to(out_ptr.dtype.element_ty)
            else:
                # A line of x's frames holds no cached values: the rest of it is padding.
                values = tl.where(from_x, normalized, 0.0).to(out_ptr.dtype.element_ty)
    if HAS_CACHE:
        if not MERGE_FIRST:
            values = merge_cache(values, cache_ptr, inside, it, cache_frames, b, ih, c, iw,
                                 cache_sb, cache_sc, cache_st, cache_sh, cache_sw)

    out_offset = b * out_sb + ot * out_st + oh * out_sh + c * out_sc + ow * out_sw
    if TF32_OUT:
        tl.store(out_ptr + out_offset, round_to_tf32_grid(values), mask=active)
    else:
        tl.store(out_ptr + out_offset, values, mask=active)

    if HAS_KEEP:
        # The next chunk's cache: the last keep_frames frames without the spatial border.
        kt = ot - (out_frames - keep_frames)
        keep_offset = b * keep_sb + kt * keep_st + ih * keep_sh + c * keep_sc + iw * keep_sw
        tl.store(keep_ptr + keep_offset, values, mask=inside & (kt >= 0))
