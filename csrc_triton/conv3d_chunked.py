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
DOT_IN_FP32 (the interpreter only: its dot of bf16 operands returns garbage with triton 3.9)
upcasts the operands first, which changes no product.
"""

import triton
import triton.language as tl

from .rounding import round_to_tf32_grid, truncate_to_tf32_grid


@triton.jit
def conv3d_chunked_kernel(
    x_ptr,
    w_ptr,
    out_ptr,
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
):
    m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    n0 = tl.program_id(1) * (BLOCK_N1 + BLOCK_N2)
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
    x_base = b * x_sb + t * x_st + h * x_sh + w * x_sw
    k = tl.arange(0, CHUNK)
    n1 = n0 + tl.arange(0, BLOCK_N1)
    acc1 = tl.zeros((BLOCK_M, BLOCK_N1), dtype=tl.float32)
    if BLOCK_N2 > 0:
        n2 = n0 + BLOCK_N1 + tl.arange(0, BLOCK_N2)
        acc2 = tl.zeros((BLOCK_M, BLOCK_N2), dtype=tl.float32)
    # One flat loop (chunk-major, taps inside) so that Triton pipelines its loads.
    for step in range((IN_CHANNELS // CHUNK) * KT * KH * KW):
        chunk = step // (KT * KH * KW)
        tap = step % (KT * KH * KW)
        dt = tap // (KH * KW)
        dh = (tap // KW) % KH
        dw = tap % KW
        c = chunk * CHUNK + k
        a = tl.load(
            x_ptr + (x_base + dt * x_st + dh * x_sh + dw * x_sw)[:, None] + c[None, :] * x_sc,
            mask=m_ok[:, None],
            other=0.0,
        )
        w_tap = c[:, None] * w_sc + dt * w_st + dh * w_sh + dw * w_sw
        b1 = tl.load(w_ptr + w_tap + n1[None, :] * w_sn, mask=(n1 < out_channels)[None, :], other=0.0)
        if x_ptr.dtype.element_ty == tl.float32:
            if ROUND_X:
                # Rounded in registers: x is the large operand, read once per tap, and has no rounded copy.
                a = round_to_tf32_grid(a)
            elif DOT_IN_FP32:
                a = truncate_to_tf32_grid(a)
        if DOT_IN_FP32:
            a = a.to(tl.float32)
            b1 = b1.to(tl.float32)
        acc1 = tl.dot(a, b1, acc1, input_precision="tf32")
        if BLOCK_N2 > 0:
            b2 = tl.load(w_ptr + w_tap + n2[None, :] * w_sn, mask=(n2 < out_channels)[None, :], other=0.0)
            if DOT_IN_FP32:
                b2 = b2.to(tl.float32)
            acc2 = tl.dot(a, b2, acc2, input_precision="tf32")
    dtype = out_ptr.dtype.element_ty
    # channels_last_3d output: position m's channels are contiguous.
    out_row = out_ptr + m[:, None] * out_channels
    tl.store(out_row + n1[None, :], acc1.to(dtype), mask=m_ok[:, None] & (n1 < out_channels)[None, :])
    if BLOCK_N2 > 0:
        tl.store(out_row + n2[None, :], acc2.to(dtype), mask=m_ok[:, None] & (n2 < out_channels)[None, :])
