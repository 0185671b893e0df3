"""The fp32 L2 norm over channels of each (batch, frame, row, column), in ATen's CUDA order.

``torch.linalg.vector_norm(x, dim=1, dtype=float32)`` of a contiguous NCDHW tensor adds
its squares in a fixed order, and the fused norm must reproduce its bits. Measured on the
H200 (``benchmarks/probe_reduction_order.py``, torch 2.11): four threads share a column,
thread ``y`` taking channels ``y, y + 4, y + 8, ...`` into four accumulators in turn
(``fma``, the order ATen's ``Reduce.cuh`` unrolls), adds its accumulators up in order, and
the four threads combine as a tree (``(t0 + t2) + (t1 + t3)``); the root is ``sqrt``.

Where each thread would still hold >= 256 channels (1024 channels), ATen also splits the
channels over ``ctas`` blocks (``Reduce.cuh``'s ``ctas_per_output``, from the column count and
the GPU's SM count; 1 means no split): thread ``y`` of block ``k`` takes channels
``y + 4k, + 4 ctas, + 8 ctas, ...``, each block combines its threads as above, and the last
block adds the block sums up, its thread ``y`` taking blocks ``y, y + 4, ...`` in turn from 0,
then the same tree. With ``ctas = 1`` that is the order above.

Here one program holds BLOCK columns and walks the blocks in turn, holding the 16 (thread,
accumulator) partial sums of one block: lane ``4 * accumulator + thread`` of step ``s`` is
channel ``4 * ctas * (4 s + accumulator) + 4 k + thread``. The order does not depend on the
layout x is read in: x can be a conv's channels-last output, with the conv's bias added on
the way (rounded to x's dtype, as stock's ``add_`` rounds it).
"""

import triton
import triton.language as tl

from .indexing import split_index
from .rounding import round_to


@triton.jit
def tree_of_four(values):
    """``(v0 + v2) + (v1 + v3)`` of each row of a (BLOCK, 4) tensor: four threads' shared-memory tree."""
    even, odd = tl.split(tl.reshape(values, (values.shape[0], 2, 2)))  # threads 0, 2 and 1, 3
    v0, v2 = tl.split(even)
    v1, v3 = tl.split(odd)
    return (v0 + v2) + (v1 + v3)


@triton.jit
def block_sum_of(partial):
    """One block's sum from its (columns, 16) partial sums, lane ``4 * i + y`` accumulator i of thread y: each
    thread adds its accumulators in order, then the four threads combine as ``tree_of_four``."""
    columns: tl.constexpr = partial.shape[0]
    by_thread = tl.reshape(tl.permute(tl.reshape(partial, (columns, 4, 4)), (0, 2, 1)), (columns, 4, 2, 2))
    even, odd = tl.split(by_thread)  # accumulators 0, 2 and 1, 3 of each thread
    a0, a2 = tl.split(even)
    a1, a3 = tl.split(odd)
    return tree_of_four(((a0 + a1) + a2) + a3)


# Line and grid sizes are not value-specialised: fewer variants to compile (see cat_pad_5d.py).
@triton.jit(do_not_specialize=["frames", "height"])
def channel_norm_kernel(
    x_ptr,
    bias_ptr,
    out_ptr,
    channels,
    frames,
    height,
    width,
    num_columns,
    ctas,
    x_sb, x_sc, x_st, x_sh, x_sw,
    HAS_BIAS: tl.constexpr,
    INDEX64: tl.constexpr,
    BLOCK: tl.constexpr,
):
    column = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if INDEX64:
        column = column.to(tl.int64)
    w, h, t, b = split_index(column, width, height, frames)
    column_ok = column < num_columns
    base = b * x_sb + t * x_st + h * x_sh + w * x_sw

    lane = tl.arange(0, 16)
    lane_channel = 4 * ctas * (lane // 4) + lane % 4  # accumulator lane // 4 of thread lane % 4
    # Lane y: what the last block's thread y has added up so far (blocks y, y + 4, ...).
    last_block = tl.zeros((BLOCK, 4), tl.float32)
    for k in range(0, ctas):
        partial = tl.zeros((BLOCK, 16), tl.float32)
        for step in range(0, channels, 16 * ctas):
            c = step + 4 * k + lane_channel
            mask = column_ok[:, None] & (c < channels)[None, :]
            values = tl.load(x_ptr + base[:, None] + c[None, :] * x_sc, mask=mask, other=0).to(tl.float32)
            if HAS_BIAS:
                bias = tl.load(bias_ptr + c, mask=c < channels, other=0).to(tl.float32)
                values = tl.where(mask, round_to(values + bias[None, :], x_ptr.dtype.element_ty), 0.0)
            # A lane past the channels adds 0 * 0: its sum stays as it is.
            partial = tl.fma(values, values, partial)

        block_sum = block_sum_of(partial)
        # Sums of squares are >= 0: adding this block to the 0 a lane starts from leaves it as it is.
        last_block = tl.where((tl.arange(0, 4) == k % 4)[None, :], last_block + block_sum[:, None], last_block)
    tl.store(out_ptr + column, tl.sqrt_rn(tree_of_four(last_block)), mask=column_ok)
