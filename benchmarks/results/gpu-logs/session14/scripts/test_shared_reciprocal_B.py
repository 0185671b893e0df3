"""``shared_reciprocal_quotient`` is IEEE division for every 16-bit dividend (the fused norm's exactness).

The quotient's steps scale exactly with the operands' exponents while every intermediate is
normal (the range channel_norm_kernel's flags vouch for), so equality on every pair of
significands, a 16-bit dividend's and an fp32 divisor's, is equality on that whole range. On
CUDA the test takes all 2**23 divisor significands; under the interpreter (whose fma is fused
and whose division is numpy's, correctly rounded) a spread sample of them.
"""

import pytest
import torch
from conftest import HAS_CUDA

from torch_wanops import _backend

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
cat_pad_kernels = _backend.kernel_module("cat_pad_5d")
if cat_pad_kernels is None:
    pytest.skip("Triton kernels unavailable", allow_module_level=True)
shared_reciprocal_quotient = cat_pad_kernels.shared_reciprocal_quotient


@triton.jit
def significand_mismatches_kernel(dividends_ptr, count_ptr, num_dividends, step, BLOCK: tl.constexpr):
    # Divisors 1 + k * step * 2**-23 in [1, 2), dividends the given values.
    index = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)) * step
    d = (0x3F800000 + index).to(tl.float32, bitcast=True)
    mismatches = tl.zeros((BLOCK,), tl.int32)
    for i in range(num_dividends):
        x = tl.load(dividends_ptr + i)
        got = shared_reciprocal_quotient(x, d)
        mismatches += (got.to(tl.int32, bitcast=True) != tl.math.div_rn(x, d).to(tl.int32, bitcast=True)).to(tl.int32)
    tl.atomic_add(count_ptr, tl.sum(mismatches))


@triton.jit
def quotient_kernel(x_ptr, d_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=1.0)
    d = tl.load(d_ptr + offsets, mask=mask, other=1.0)
    tl.store(out_ptr + offsets, shared_reciprocal_quotient(x, d), mask=mask)


def significands(dtype):
    """Every value of ``dtype`` in [1, 2), as fp32."""
    bits = 7 if dtype == torch.bfloat16 else 10
    exponent_one = 127 << 7 if dtype == torch.bfloat16 else 15 << 10
    return (torch.arange(1 << bits, dtype=torch.int32) | exponent_one).to(torch.int16).view(dtype).float()


def device():
    if HAS_CUDA and not _backend.INTERPRETER:
        return "cuda"
    if _backend.INTERPRETER:
        return "cpu"
    pytest.skip("needs CUDA or TRITON_INTERPRET=1")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_every_16_bit_significand_over_fp32_divisor_significands(dtype):
    where = device()
    dividends = significands(dtype).to(where)
    # CUDA: all 2**23 divisor significands; the interpreter: every 2**13-th (1024, spread over [1, 2)).
    step, block = (1, 1024) if where == "cuda" else (1 << 13, 1024)
    count = torch.zeros(1, dtype=torch.int32, device=where)
    significand_mismatches_kernel[((1 << 23) // (step * block),)](dividends, count, dividends.numel(), step, BLOCK=block,
                                                                  enable_fp_fusion=False)
    assert int(count) == 0


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_random_operands_across_the_flagged_range(dtype):
    """Dividends from 2**-80 (or fp16's smallest) to 2**32 (or fp16's largest) and divisors from 1e-12 to
    2**32, signs and zeros, also outside the fused norm's own d >= |x|: correctly rounded, as div_rn."""
    where = device()
    generator = torch.Generator().manual_seed(0)
    n = 1 << (20 if where == "cuda" else 14)
    top = 32 if dtype == torch.bfloat16 else 15
    bottom = -80 if dtype == torch.bfloat16 else -24
    x = torch.rand(n, generator=generator) * (top - bottom) + bottom
    x = (torch.exp2(x) * torch.where(torch.rand(n, generator=generator) < 0.5, -1.0, 1.0)).to(dtype).float()
    x[::97] = 0.0
    d = torch.exp2(torch.rand(n, generator=generator) * 72 - 39.8).clamp(1e-12, 2.0**32)
    x, d = x.to(where), d.to(where)
    out = torch.empty_like(x)
    quotient_kernel[(-(-n // 1024),)](x, d, out, n, BLOCK=1024, enable_fp_fusion=False)
    assert torch.equal(out, x / d)  # ATen's division is correctly rounded on both devices
