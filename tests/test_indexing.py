"""The line-tiled kernels' division by a runtime size: ``_backend.division_magic`` and ``indexing.divide``."""

import pytest
import torch
from conftest import HAS_KERNELS, KERNEL_DEVICE
from hypothesis import example, given
from hypothesis import strategies as st

from torch_wanops import _backend

LARGEST_NUMERATOR = 2**31 - 1  # the grid's largest line index
# Divisors where the multiplier's rounding is tightest: powers of two and their neighbours, and the decoder's sizes.
EDGE_DIVISORS = sorted({1, 2, 3, 5, 7, 242, 418, 482, 834, 2**31 - 1}
                       | {2**k + d for k in range(1, 31) for d in (-1, 0, 1)})


def quotient_by_magic(n: int, divisor: int) -> int:
    """What ``indexing.divide`` computes, in Python integers: a 32-bit multiply-high of 2n, then the shift."""
    magic, shift = _backend.division_magic(divisor)
    return ((2 * n * (magic + 2**31)) >> 32) >> shift


@given(n=st.integers(0, LARGEST_NUMERATOR), divisor=st.integers(1, LARGEST_NUMERATOR))
@example(n=LARGEST_NUMERATOR, divisor=3)
@example(n=LARGEST_NUMERATOR, divisor=LARGEST_NUMERATOR)
@example(n=LARGEST_NUMERATOR - 1, divisor=LARGEST_NUMERATOR)
def test_division_magic_gives_the_floor_quotient(n, divisor):
    magic, shift = _backend.division_magic(divisor)
    assert -(2**31) <= magic < 2**31  # an int32 argument whatever the divisor: one kernel variant
    assert quotient_by_magic(n, divisor) == n // divisor


@pytest.mark.parametrize("divisor", EDGE_DIVISORS)
def test_division_magic_at_the_edges(divisor):
    """Each quotient's first and last numerator, where a multiplier too small or too large would show."""
    numerators = {LARGEST_NUMERATOR, LARGEST_NUMERATOR - 1, 0, 1}
    for q in (1, 2, 3, LARGEST_NUMERATOR // divisor - 1, LARGEST_NUMERATOR // divisor):
        numerators |= {q * divisor - 1, q * divisor, q * divisor + divisor - 1}
    for n in sorted(m for m in numerators if 0 <= m <= LARGEST_NUMERATOR):
        assert quotient_by_magic(n, divisor) == n // divisor, n


@pytest.mark.parametrize("divisor", [0, -3, 2**31])
def test_division_magic_rejects_divisors_out_of_range(divisor):
    with pytest.raises(ValueError, match="divisor must be in"):
        _backend.division_magic(divisor)


indexing = _backend.kernel_module("indexing")
if indexing is not None:
    import triton
    import triton.language as tl

    @triton.jit(do_not_specialize=["magic", "shift"])  # as in the line-tiled kernels (a shift of 1 stays an int)
    def divide_kernel(n_ptr, out_ptr, magic, shift, size, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        n = tl.load(n_ptr + offsets, mask=offsets < size)
        tl.store(out_ptr + offsets, indexing.divide(n, magic, shift), mask=offsets < size)


@pytest.mark.skipif(not HAS_KERNELS, reason="needs the Triton kernels: a GPU, or TRITON_INTERPRET=1")
# The device in the id: on a GPU machine "cuda" marks the test for `-m cuda` (conftest).
@pytest.mark.parametrize("device", [KERNEL_DEVICE], ids=str)
@pytest.mark.parametrize("divisor", [1, 2, 3, 418, 65535, 2**30 + 1, LARGEST_NUMERATOR])
def test_divide_in_a_kernel(divisor, device):
    """``indexing.divide`` as compiled (CUDA) or interpreted, against Python's floor division."""
    generator = torch.Generator().manual_seed(divisor)
    numerators = torch.cat([
        torch.randint(0, 2**31, (1000,), generator=generator),
        torch.tensor([0, 1, divisor - 1, divisor, LARGEST_NUMERATOR - 1, LARGEST_NUMERATOR]),
    ]).clamp(0, LARGEST_NUMERATOR).to(torch.int32)
    quotients = torch.empty_like(numerators, device=device)
    divide_kernel[(triton.cdiv(numerators.numel(), 256),)](
        numerators.to(device), quotients, *_backend.division_magic(divisor), numerators.numel(), BLOCK=256)
    assert torch.equal(quotients.cpu(), torch.div(numerators, divisor, rounding_mode="floor"))
