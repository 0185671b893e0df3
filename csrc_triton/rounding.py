"""Rounding fp32 results onto a narrower dtype's grid, the way ATen's CUDA kernels do."""

import os

import triton
import triton.language as tl

# The interpreter truncates fp32->bf16 casts; the GPU rounds to nearest even.
INTERPRETED = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")


@triton.jit
def round_to_bfloat16_grid(value):
    """Round fp32 to the nearest bf16 value, ties to even, keeping it in fp32, with integer ops.

    Used under the interpreter, whose own cast truncates. NaN passes through unchanged.
    """
    bits = value.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return tl.where(value != value, value, bits.to(tl.float32, bitcast=True))


@triton.jit
def round_to(value, dtype: tl.constexpr):
    """``value`` (fp32) rounded to nearest-even onto ``dtype``'s grid, still in fp32.

    This is ATen's ``static_cast<scalar_t>(opmath result)`` between two elementwise
    ops. On the GPU it is one cvt.rn instruction (and a shift back).
    """
    if dtype == tl.bfloat16:
        if INTERPRETED:
            return round_to_bfloat16_grid(value)
        else:
            return value.to(tl.bfloat16).to(tl.float32)
    elif dtype == tl.float16:
        return value.to(tl.float16).to(tl.float32)
    else:
        return value
