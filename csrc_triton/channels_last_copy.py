"""A contiguous (N, C, *spatial) tensor copied into channels-last memory: (N, C, S) -> (N, S, C).

Each program moves one (BLOCK_C x BLOCK_S) tile of one n: it reads BLOCK_C rows of
spatial positions (stride 1 in x) and writes BLOCK_S rows of channels (stride 1 in the
output), so both sides stay coalesced; Triton stages the transpose through shared memory.
A copy: every dtype comes out exact.
"""

import triton
import triton.language as tl


@triton.jit
def channels_last_copy_kernel(
    x_ptr,
    out_ptr,
    channels,
    positions,
    c_blocks,
    s_blocks,
    INDEX64: tl.constexpr,
    BLOCK_C: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    pid = tl.program_id(0)
    if INDEX64:
        pid = pid.to(tl.int64)
    s_block = pid % s_blocks
    rest = pid // s_blocks
    c_block = rest % c_blocks
    n = rest // c_blocks
    c = c_block * BLOCK_C + tl.arange(0, BLOCK_C)
    s = s_block * BLOCK_S + tl.arange(0, BLOCK_S)
    mask = (c < channels)[:, None] & (s < positions)[None, :]
    base = n * channels * positions
    tile = tl.load(x_ptr + base + c[:, None] * positions + s[None, :], mask=mask)
    tl.store(out_ptr + base + s[None, :] * channels + c[:, None], tile, mask=mask)
