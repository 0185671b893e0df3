"""Rounding fp32 results onto a narrower dtype's grid, the way ATen's CUDA kernels do."""

import os

import triton
import triton.language as tl

# The interpreter truncates fp32->bf16 casts; the GPU rounds to nearest even.
INTERPRETED = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")


@triton.jit
def round_significand(value, DROPPED_BITS: tl.constexpr):
    """Round fp32 to nearest (ties to even) with its lowest DROPPED_BITS significand bits cleared, with integer ops.

    Carries into the exponent as a cast does (the largest values round to infinity). NaN becomes
    the NaN with every significand bit set: rounded, a NaN could carry into a zero or lose the
    significand bits that make it a NaN in the narrower format.
    """
    below_half = (1 << (DROPPED_BITS - 1)) - 1
    kept = 0xFFFFFFFF - ((1 << DROPPED_BITS) - 1)
    bits = value.to(tl.uint32, bitcast=True)
    bits = (bits + below_half + ((bits >> DROPPED_BITS) & 1)) & kept
    return tl.where(value != value, 0x7FFFFFFF, bits).to(tl.float32, bitcast=True)


@triton.jit
def round_to_bfloat16_grid(value):
    """Round fp32 to the nearest bf16 value, ties to even, keeping it in fp32.

    Used under the interpreter, whose own cast truncates.
    """
    return round_significand(value, 16)


@triton.jit
def round_to_tf32_grid(value):
    """Round fp32 to the nearest TF32 value (10 significand bits), ties to even, keeping it in fp32.

    cuDNN's TF32 conv kernels round their operands so (H200, session 17: truncation and
    ties-away both differ from them); the tensor cores then read the rounded bits exactly.
    """
    return round_significand(value, 13)


@triton.jit
def truncate_to_tf32_grid(value):
    """fp32 with the 13 low significand bits TF32 drops cleared: how the tensor cores read fp32 operands."""
    return (value.to(tl.uint32, bitcast=True) & 0xFFFFE000).to(tl.float32, bitcast=True)


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
