"""Causal Conv3d input in one pass: zeros, cached frames, new frames, spatial zero border.

Each program owns a tile of ROWS output "rows" (every coordinate but the innermost
one) by BLOCK elements of the innermost dimension, so loads and stores along that
dimension are coalesced and the row index math is done once per row. The innermost dimension is the output's stride-1 dimension: channels
for channels_last_3d, width otherwise. All addressing goes through explicit
strides, so any input views and any dense output layout are handled.
"""

import triton
import triton.language as tl


@triton.jit
def cat_pad_5d_kernel(
    x_ptr,
    cache_ptr,
    out_ptr,
    keep_ptr,
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
    HAS_CACHE: tl.constexpr,
    HAS_KEEP: tl.constexpr,
    INNER_IS_CHANNEL: tl.constexpr,
    INDEX64: tl.constexpr,
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
