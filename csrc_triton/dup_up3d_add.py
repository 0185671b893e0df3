"""``main + DupUp3D(source)`` without materialising the duplicated shortcut.

DupUp3D repeats each source channel ``repeats`` times, then reads the repeated
channel axis as (out_channel, t_factor, h_factor, w_factor) and moves those factors
into time, height and width. Inverting that map gives, for each output element,
the one source element it copies; the add is done in fp32 and rounded once to the
output dtype (to nearest, ties to even), which is what ATen's elementwise add does
for fp16/bf16/fp32.
"""

import triton
import triton.language as tl

from .indexing import dup_up3d_source_offset, split_index
from .rounding import round_to


# Line and grid sizes are not value-specialised: fewer variants to compile (see cat_pad_5d.py).
@triton.jit(do_not_specialize=["out_frames", "out_height", "frame_offset", "num_rows"])
def dup_up3d_add_kernel(
    main_ptr,
    source_ptr,
    out_ptr,
    channels,
    out_frames,
    out_height,
    out_width,
    frame_offset,
    inner_size,
    num_rows,
    main_sb, main_sc, main_st, main_sh, main_sw,
    source_sb, source_sc, source_st, source_sh, source_sw,
    out_sb, out_sc, out_st, out_sh, out_sw,
    FACTOR_T: tl.constexpr,
    FACTOR_S: tl.constexpr,
    REPEATS: tl.constexpr,
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
        ow, oh, ot, b = split_index(row, out_width, out_height, out_frames)
        c = lane[None, :]
        ow = ow[:, None]
    else:
        oh, ot, c, b = split_index(row, out_height, out_frames, channels)
        c = c[:, None]
        ow = lane[None, :]
    oh = oh[:, None]
    ot = ot[:, None]
    b = b[:, None]

    source_offset = dup_up3d_source_offset(b, c, ot, oh, ow, frame_offset, source_sb, source_sc, source_st,
                                           source_sh, source_sw, FACTOR_T, FACTOR_S, REPEATS)
    main_offset = b * main_sb + c * main_sc + ot * main_st + oh * main_sh + ow * main_sw
    main_value = tl.load(main_ptr + main_offset, mask=active)
    source_value = tl.load(source_ptr + source_offset, mask=active)
    total = main_value.to(tl.float32) + source_value.to(tl.float32)
    total = round_to(total, out_ptr.dtype.element_ty)
    out_offset = b * out_sb + c * out_sc + ot * out_st + oh * out_sh + ow * out_sw
    tl.store(out_ptr + out_offset, total.to(out_ptr.dtype.element_ty), mask=active)
