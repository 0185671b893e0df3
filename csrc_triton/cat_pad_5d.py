"""Causal Conv3d input in one pass: zeros, cached frames, new frames, spatial zero border.

Each program owns a tile of ROWS output "rows" (every coordinate but the innermost
one) by BLOCK elements of the innermost dimension, so loads and stores along that
dimension are coalesced and the row index math is done once per row. The innermost dimension is the output's stride-1 dimension: channels
for channels_last_3d, width otherwise. All addressing goes through explicit
strides, so any input views and any dense output layout are handled.

With NORM the new frames pass through WanRMS_norm (and SiLU with SILU) on their
way in: ``F.normalize(x, dim=1)`` from a precomputed fp32 channel norm, then
``* scale``, ``* gamma``, ``+ 0.0`` and SiLU, each rounded to the output dtype as
ATen's separate kernels round them (the launcher disables fp contraction). Cached
frames are already normalized and are copied as they are.
"""

import triton
import triton.language as tl
from triton.language.extra import libdevice

from .rounding import round_to


@triton.jit
def rms_norm_silu(x, norm, gamma, scale, SILU: tl.constexpr, LIBDEVICE_EXP: tl.constexpr, dtype: tl.constexpr):
    """Stock ``silu(F.normalize(x.float(), dim=1).to(dtype) * scale * gamma + 0.0)`` in fp32 registers."""
    # F.normalize: x / norm.clamp_min(1e-12), IEEE division (ATen is built without fast math).
    y = round_to(tl.math.div_rn(x, tl.where(norm < 1e-12, 1e-12, norm)), dtype)
    y = round_to(y * scale, dtype)
    y = round_to(y * gamma, dtype)
    y = y + 0.0  # the bias-free norm adds 0.0: -0.0 becomes +0.0, and stays on the grid
    if SILU:
        # ATen's silu: x / (1 + expf(-x)). libdevice's expf is CUDA's; the interpreter has only tl.exp.
        if LIBDEVICE_EXP:
            e = libdevice.exp(-y)
        else:
            e = tl.exp(-y)
        y = round_to(tl.math.div_rn(y, 1.0 + e), dtype)
    return y


@triton.jit
def cat_pad_5d_kernel(
    x_ptr,
    cache_ptr,
    out_ptr,
    keep_ptr,
    norm_ptr,
    gamma_ptr,
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
    inner_size,
    num_rows,
    x_sb, x_sc, x_st, x_sh, x_sw,
    cache_sb, cache_sc, cache_st, cache_sh, cache_sw,
    out_sb, out_sc, out_st, out_sh, out_sw,
    keep_sb, keep_sc, keep_st, keep_sh, keep_sw,
    norm_sb, norm_st, norm_sh, norm_sw,
    HAS_CACHE: tl.constexpr,
    HAS_KEEP: tl.constexpr,
    INNER_IS_CHANNEL: tl.constexpr,
    INDEX64: tl.constexpr,
    NORM: tl.constexpr,
    SILU: tl.constexpr,
    LIBDEVICE_EXP: tl.constexpr,
    ROWS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    row = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    lane = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    if INDEX64:
        row = row.to(tl.int64)
        lane = lane.to(tl.int64)
    active = (row < num_rows)[:, None] & (lane < inner_size)[None, :]

    # Split each row index into coordinates; the lane is the innermost coordinate.
    if INNER_IS_CHANNEL:
        ow = row % out_width
        rest = row // out_width
        oh = rest % out_height
        rest = rest // out_height
        ot = rest % out_frames
        b = rest // out_frames
        c = lane[None, :]
        ow = ow[:, None]
    else:
        oh = row % out_height
        rest = row // out_height
        ot = rest % out_frames
        rest = rest // out_frames
        c = (rest % channels)[:, None]
        b = rest // channels
        ow = lane[None, :]
    oh = oh[:, None]
    ot = ot[:, None]
    b = b[:, None]

    ih = oh - pad_h
    iw = ow - pad_w
    it = ot - zero_frames
    inside = active & (ih >= 0) & (ih < height) & (iw >= 0) & (iw < width)

    from_x = inside & (it >= cache_frames)
    x_offset = b * x_sb + c * x_sc + (it - cache_frames) * x_st + ih * x_sh + iw * x_sw
    values = tl.load(x_ptr + x_offset, mask=from_x, other=0)
    if NORM:
        norm_offset = b * norm_sb + (it - cache_frames) * norm_st + ih * norm_sh + iw * norm_sw
        norm = tl.load(norm_ptr + norm_offset, mask=from_x, other=1.0)
        gamma = tl.load(gamma_ptr + c, mask=from_x, other=0).to(tl.float32)
        normalized = rms_norm_silu(values.to(tl.float32), norm, gamma, scale, SILU, LIBDEVICE_EXP,
                                   out_ptr.dtype.element_ty)
        values = tl.where(from_x, normalized, 0.0).to(out_ptr.dtype.element_ty)
    if HAS_CACHE:
        from_cache = inside & (it >= 0) & (it < cache_frames)
        cache_offset = b * cache_sb + c * cache_sc + it * cache_st + ih * cache_sh + iw * cache_sw
        cached = tl.load(cache_ptr + cache_offset, mask=from_cache, other=0)
        values = tl.where(from_cache, cached, values)

    out_offset = b * out_sb + c * out_sc + ot * out_st + oh * out_sh + ow * out_sw
    tl.store(out_ptr + out_offset, values, mask=active)

    if HAS_KEEP:
        # The next chunk's cache: the last keep_frames frames without the spatial border.
        kt = ot - (out_frames - keep_frames)
        keep_offset = b * keep_sb + c * keep_sc + kt * keep_st + ih * keep_sh + iw * keep_sw
        tl.store(keep_ptr + keep_offset, values, mask=inside & (kt >= 0))
