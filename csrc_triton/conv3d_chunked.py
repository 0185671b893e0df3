"""A stride-1, unpadded Conv3d as an implicit GEMM, summed in cuDNN's channel-chunk order.

Each program owns BLOCK_M output positions (batch, frame, row, column, flattened) and
the output channels of one block (BLOCK_N1 + BLOCK_N2 of them: 96 as 64 + 32, no lane
idle). The reduction runs over 32-channel chunks, and inside each chunk over the kernel
taps (frame, row, column offsets), one ``tl.dot`` of 32 channels per step into an fp32
accumulator: the order of cuDNN's implicit-GEMM kernels with a 32-channel K tile
(``...nhwckrsc_nhwc_tilesize*x*x32...``), which the H200 measurements showed bit for bit
(``benchmarks/probe_conv_order.py``; gpu-logs/session15). The result is rounded once to the output dtype.
fp32 x is TF32 arithmetic, as cuDNN's TF32 kernels do it: with ROUND_X each x operand rounded to
the nearest TF32 value (ties to even) as it is loaded; without, x goes to the tensor cores as loaded,
which read fp32 as TF32 by dropping the low 13 significand bits (emulated under the interpreter,
whose dot reads them all). The launcher hands the weight in rounded already.
All addressing goes through explicit strides; the output is (B, N, T, H, W) channels_last_3d.

A second launch with TAIL then rewrites the output's last tiles (BLOCK_M positions x
BLOCK_N1 channels each, 128 x 128) the way cuDNN's ``segment_k_on`` TF32 kernels sum them (the tiles
left over after whole waves over the SMs, whose K steps it spreads over several programs): the K
steps cut into ``tail_segments`` runs, each summed from zero in the same order, the partial sums then
added from the last run back to the first (H200, session 19: ``benchmarks/probe_split_tiles.py``).
``tail_segments`` is a runtime argument, not specialized on: the decoder's check tries one count after
another, and as a constexpr each count was a compile of its own, unrolled that many times (session 65:
36 such compiles, 118 s of a cold first Wan2.1 fp32 720x1280 decode's 149 s on an H100).
DOT_IN_FP32 (the interpreter only: its dot of bf16 operands returns garbage with triton 3.9)
upcasts the operands first, which changes no product.
"""

import triton
import triton.language as tl

from .rounding import round_to_tf32_grid, truncate_to_tf32_grid


@triton.jit
def output_positions(first, positions, out_frames, out_height, out_width, x_sb, x_st, x_sh, x_sw,
               INDEX64: tl.constexpr, BLOCK_M: tl.constexpr):
    """Output positions first .. first + BLOCK_M - 1 (clamped in range), which of them exist, and their x offsets."""
    m = first + tl.arange(0, BLOCK_M)
    if INDEX64:
        m = m.to(tl.int64)
    m_ok = m < positions
    m = tl.where(m_ok, m, 0)
    w = m % out_width
    rest = m // out_width
    h = rest % out_height
    rest = rest // out_height
    t = rest % out_frames
    b = rest // out_frames
    return m, m_ok, b * x_sb + t * x_st + h * x_sh + w * x_sw


@triton.jit
def x_operand(x_ptr, x_base, m_ok, step, x_sc, x_st, x_sh, x_sw, KT: tl.constexpr, KH: tl.constexpr,
               KW: tl.constexpr, CHUNK: tl.constexpr, ROUND_X: tl.constexpr, DOT_IN_FP32: tl.constexpr):
    """K step ``step`` (chunk-major, taps inside): its x operand, its channel chunk and its tap (frame, row, column)."""
    chunk = step // (KT * KH * KW)
    tap = step % (KT * KH * KW)
    dt = tap // (KH * KW)
    dh = (tap // KW) % KH
    dw = tap % KW
    c = chunk * CHUNK + tl.arange(0, CHUNK)
    a = tl.load(
        x_ptr + (x_base + dt * x_st + dh * x_sh + dw * x_sw)[:, None] + c[None, :] * x_sc,
        mask=m_ok[:, None],
        other=0.0,
    )
    if x_ptr.dtype.element_ty == tl.float32:
        if ROUND_X:
            # Rounded in registers: x is the large operand, read once per tap, and has no rounded copy.
            a = round_to_tf32_grid(a)
        elif DOT_IN_FP32:
            a = truncate_to_tf32_grid(a)
    if DOT_IN_FP32:
        a = a.to(tl.float32)
    return a, chunk, dt, dh, dw


@triton.jit
def dot_step(acc, a, w_ptr, chunk, dt, dh, dw, n, out_channels, w_sn, w_sc, w_st, w_sh, w_sw,
              CHUNK: tl.constexpr, DOT_IN_FP32: tl.constexpr):
    """acc plus the dot of x operand ``a`` with the weight of output channels n at a step's chunk and tap."""
    c = chunk * CHUNK + tl.arange(0, CHUNK)
    b = tl.load(
        w_ptr + (c[:, None] * w_sc + dt * w_st + dh * w_sh + dw * w_sw) + n[None, :] * w_sn,
        mask=(n < out_channels)[None, :],
        other=0.0,
    )
    if DOT_IN_FP32:
        b = b.to(tl.float32)
    return tl.dot(a, b, acc, input_precision="tf32")


@triton.jit
def store_tile(out_ptr, m, m_ok, n, out_channels, acc):
    # channels_last_3d output: position m's channels are contiguous.
    tl.store(out_ptr + m[:, None] * out_channels + n[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=m_ok[:, None] & (n < out_channels)[None, :])


@triton.jit
def segment_sum(x_ptr, x_base, m_ok, w_ptr, n, out_channels, segment, segments,
                x_sc, x_st, x_sh, x_sw, w_sn, w_sc, w_st, w_sh, w_sw, steps: tl.constexpr, KT: tl.constexpr,
                KH: tl.constexpr, KW: tl.constexpr, CHUNK: tl.constexpr, ROUND_X: tl.constexpr,
                DOT_IN_FP32: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    """Run ``segment`` of ``segments`` summed from zero: steps segment * steps // segments to the next run's first."""
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(segment * steps // segments, (segment + 1) * steps // segments):
        a, chunk, dt, dh, dw = x_operand(x_ptr, x_base, m_ok, step, x_sc, x_st, x_sh, x_sw, KT, KH, KW, CHUNK,
                                         ROUND_X, DOT_IN_FP32)
        acc = dot_step(acc, a, w_ptr, chunk, dt, dh, dw, n, out_channels, w_sn, w_sc, w_st, w_sh, w_sw, CHUNK,
                       DOT_IN_FP32)
    return acc


@triton.jit(do_not_specialize=["tail_segments"])
def conv3d_chunked_kernel(
    x_ptr,
    w_ptr,
    out_ptr,
    first_tail_tile,
    tail_segments,
    positions,
    out_channels,
    out_frames,
    out_height,
    out_width,
    x_sb, x_sc, x_st, x_sh, x_sw,
    w_sn, w_sc, w_st, w_sh, w_sw,
    IN_CHANNELS: tl.constexpr,
    KT: tl.constexpr,
    KH: tl.constexpr,
    KW: tl.constexpr,
    CHUNK: tl.constexpr,
    ROUND_X: tl.constexpr,
    DOT_IN_FP32: tl.constexpr,
    INDEX64: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N1: tl.constexpr,
    BLOCK_N2: tl.constexpr,
    TAIL: tl.constexpr,
):
    if not TAIL:
        m_first = tl.program_id(0) * BLOCK_M
    else:
        # One tail tile per program, tiles in position-major order from first_tail_tile.
        tile = first_tail_tile + tl.program_id(0)
        channel_tiles = tl.cdiv(out_channels, BLOCK_N1)
        m_first = (tile // channel_tiles) * BLOCK_M
    m, m_ok, x_base = output_positions(m_first, positions, out_frames, out_height, out_width,
                                       x_sb, x_st, x_sh, x_sw, INDEX64, BLOCK_M)
    if not TAIL:
        n0 = tl.program_id(1) * (BLOCK_N1 + BLOCK_N2)
    else:
        n0 = (tile % channel_tiles) * BLOCK_N1
    n1 = n0 + tl.arange(0, BLOCK_N1)
    steps: tl.constexpr = (IN_CHANNELS // CHUNK) * KT * KH * KW
    if not TAIL:
        acc1 = tl.zeros((BLOCK_M, BLOCK_N1), dtype=tl.float32)
        if BLOCK_N2 > 0:
            n2 = n0 + BLOCK_N1 + tl.arange(0, BLOCK_N2)
            acc2 = tl.zeros((BLOCK_M, BLOCK_N2), dtype=tl.float32)
        # One flat loop (chunk-major, taps inside) so that Triton pipelines its loads.
        for step in range(steps):
            a, chunk, dt, dh, dw = x_operand(x_ptr, x_base, m_ok, step, x_sc, x_st, x_sh, x_sw, KT, KH, KW, CHUNK,
                                             ROUND_X, DOT_IN_FP32)
            acc1 = dot_step(acc1, a, w_ptr, chunk, dt, dh, dw, n1, out_channels, w_sn, w_sc, w_st, w_sh, w_sw,
                            CHUNK, DOT_IN_FP32)
            if BLOCK_N2 > 0:
                acc2 = dot_step(acc2, a, w_ptr, chunk, dt, dh, dw, n2, out_channels, w_sn, w_sc, w_st, w_sh, w_sw,
                                CHUNK, DOT_IN_FP32)
        store_tile(out_ptr, m, m_ok, n1, out_channels, acc1)
        if BLOCK_N2 > 0:
            store_tile(out_ptr, m, m_ok, n2, out_channels, acc2)
    else:
        # The runs' sums added last to first: the last run's, then each earlier one's in turn.
        total = segment_sum(x_ptr, x_base, m_ok, w_ptr, n1, out_channels, tail_segments - 1, tail_segments,
                            x_sc, x_st, x_sh, x_sw, w_sn, w_sc, w_st, w_sh, w_sw, steps, KT, KH, KW, CHUNK, ROUND_X,
                            DOT_IN_FP32, BLOCK_M, BLOCK_N1)
        for done in range(1, tail_segments):
            total = total + segment_sum(x_ptr, x_base, m_ok, w_ptr, n1, out_channels, tail_segments - 1 - done,
                                        tail_segments, x_sc, x_st, x_sh, x_sw, w_sn, w_sc, w_st, w_sh, w_sw, steps,
                                        KT, KH, KW, CHUNK, ROUND_X, DOT_IN_FP32, BLOCK_M, BLOCK_N1)
        store_tile(out_ptr, m, m_ok, n1, out_channels, total)
