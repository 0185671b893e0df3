"""csrc_triton/norm_ptx.py: the fused norm's division by a per-column reciprocal and its SiLU table read.

Inline PTX runs on the GPU only: the exactness tests are CUDA tests; on the CPU the PTX text is checked here and
the kernel's sm_90 build with it in tests/test_count_sass.py.
"""

import re

import pytest
import torch
from conftest import cuda

from torch_wanops import _backend

triton = pytest.importorskip("triton")
tl = pytest.importorskip("triton.language")
norm_ptx = _backend.kernel_module("norm_ptx")
if norm_ptx is None:
    pytest.skip("Triton kernels unavailable", allow_module_level=True)

BLOCK_C, BLOCK_W = 64, 32  # 16 elements per thread on 4 warps: two packs


@triton.jit
def divide_kernel(x_ptr, norm_ptr, out_ptr, rows, columns, BLOCK_C: tl.constexpr, BLOCK_W: tl.constexpr):
    """out[i, j] = divide_by_norm(x[i], norm[j]): each column of the tile shares its norm, as in the fused norm."""
    i = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)[:, None]
    j = tl.program_id(1) * BLOCK_W + tl.arange(0, BLOCK_W)[None, :]
    # broadcast_to, not + 0.0: that would turn -0.0 into +0.0
    x = tl.broadcast_to(tl.load(x_ptr + i, mask=i < rows, other=1.0).to(tl.float32), (BLOCK_C, BLOCK_W))
    norm = tl.load(norm_ptr + j, mask=j < columns, other=1.0)
    tl.store(out_ptr + i * columns + j, norm_ptx.divide_by_norm(x, norm), mask=(i < rows) & (j < columns))


@triton.jit
def lookup_kernel(table_ptr, bits_ptr, out_ptr, n, BLOCK: tl.constexpr):
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    bits = tl.load(bits_ptr + k, mask=k < n, other=0)
    tl.store(out_ptr + k, norm_ptx.lookup_16bit(table_ptr, bits, table_ptr.dtype.element_ty), mask=k < n)


def every_16_bit_value(dtype):
    return torch.arange(-(1 << 15), 1 << 15, dtype=torch.int32).to(torch.int16).view(dtype)


def divisors(count, seed):
    """Log-uniform fp32 norms over [2**-45, 2**45] and the guard's edges and specials."""
    generator = torch.Generator().manual_seed(seed)
    exponents = torch.rand(count, generator=generator, dtype=torch.float64) * 90 - 45
    largest = float(norm_ptx.LARGEST_DIVISOR.value)
    edges = torch.tensor([largest, 1e-12, 0.0, 1.0, 3.0, 2.0**-126, 1e-45, float("inf"), float("nan"),
                          torch.finfo(torch.float32).max], dtype=torch.float32)
    either_side = torch.nextafter(edges[:2].repeat(2), torch.tensor([0.0, 0.0, float("inf"), float("inf")]))
    return torch.cat([torch.exp2(exponents).float(), edges, either_side])


def same_bits(got, expected):
    """Equal fp32 bit patterns, any NaN matching any NaN (NaN payloads are not a rounding)."""
    nan = expected.isnan()
    return torch.equal(got.isnan(), nan) and torch.equal(got[~nan].view(torch.int32), expected[~nan].view(torch.int32))


@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_division_is_the_ieee_quotient_for_every_16_bit_dividend_on_cuda(dtype):
    x = every_16_bit_value(dtype).cuda()
    norm = divisors(2048, seed=0).cuda()
    out = torch.empty(x.numel(), norm.numel(), device="cuda")
    grid = (triton.cdiv(x.numel(), BLOCK_C), triton.cdiv(norm.numel(), BLOCK_W))
    divide_kernel[grid](x, norm, out, x.numel(), norm.numel(), BLOCK_C=BLOCK_C, BLOCK_W=BLOCK_W, num_warps=4)
    expected = x.float()[:, None] / norm.clamp_min(1e-12)[None, :]  # ATen's div.rn
    assert same_bits(out, expected)


@cuda
def test_division_takes_its_fallback_for_a_pack_out_of_range_on_cuda():
    """One zero or subnormal dividend sends its pack to div.rn; the other elements' quotients stay exact."""
    values = torch.tensor([0.0, -0.0, 1e-40, 1.5, -3.0, 7.0, 1e30, float("inf")], dtype=torch.float32)
    x = values.repeat(BLOCK_C // values.numel()).cuda()
    norm = torch.tensor([1e-12, 0.5, 3.0, 2.0**39, 2.0**41, 1e38], device="cuda")
    out = torch.empty(x.numel(), norm.numel(), device="cuda")
    divide_kernel[(1, 1)](x, norm, out, x.numel(), norm.numel(), BLOCK_C=BLOCK_C, BLOCK_W=BLOCK_W, num_warps=4)
    expected = x[:, None] / norm.clamp_min(1e-12)[None, :]
    assert same_bits(out, expected)
    signs = out[~out.isnan()].view(torch.int32) < 0
    assert torch.equal(signs, expected[~expected.isnan()].view(torch.int32) < 0)  # -0.0 stays -0.0


@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
def test_lookup_reads_every_entry_on_cuda(dtype):
    table = torch.randn(1 << 16, device="cuda").to(dtype)
    bits = torch.randperm(1 << 16, device="cuda").int()
    out = torch.empty(1 << 16, device="cuda")
    lookup_kernel[(triton.cdiv(1 << 16, 1024),)](table, bits, out, 1 << 16, BLOCK=1024)
    assert torch.equal(out, table[bits.long()].float())


def test_division_asm_numbers_its_operands_in_order():
    asm = norm_ptx.division_asm(2)
    # outputs $0-$1, dividends $2-$3, negated divisors $4-$5, reciprocals $6-$7
    assert "mul.rn.f32 q1, $3, $7;" in asm and "fma.rn.f32 e1, q1, $5, $3;" in asm
    assert "fma.rn.f32 $1, e1, $7, q1;" in asm
    fallback = asm[asm.index("@ok bra DONE;"):]
    assert fallback.count("div.rn.f32") == 2 and "div.rn.f32 $0, $2, d;" in fallback
    assert "div.rn" not in asm[:asm.index("@ok bra DONE;")]
    guard = re.findall(r"setp\.(\w+)\.(?:and\.)?f32 ok, a, (0f[0-9A-F]+)", asm)
    assert guard == [("ge", norm_ptx.LOWEST_ESTIMATE), ("le", norm_ptx.HIGHEST_ESTIMATE)] * 2
    assert norm_ptx.division_asm(norm_ptx.PACK).count("@ok bra DONE;") == 1  # one branch per pack


def test_guard_bounds_are_the_documented_powers_of_two():
    as_float = {name: torch.tensor(int(getattr(norm_ptx, name)[2:], 16), dtype=torch.int32).view(torch.float32)
                for name in ("LOWEST_ESTIMATE", "HIGHEST_ESTIMATE")}
    assert as_float == {"LOWEST_ESTIMATE": 2.0**-60, "HIGHEST_ESTIMATE": 2.0**60}
