"""wanops::conv3d_chunked against ``F.conv3d``: exact sums on integer values anywhere, cuDNN's bits on the GPU."""

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    HAS_CUDA,
    KERNEL_DEVICE,
    LAYOUTS,
    cuda,
    impl_params,
    make_layout,
    run_impl,
    skip_unless_free_gpu_memory,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from torch_wanops import _backend
from torch_wanops import decoder as decoder_module
from torch_wanops.ops import conv3d_chunked
from torch_wanops.ops._common import rounded_to_tf32, truncated_to_tf32
from torch_wanops.ops.conv3d_chunked import output_tiles, takes_kernel

CL = torch.channels_last_3d


def integer_tensor(shape, dtype, device, seed, low=-4, high=4):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(low, high + 1, shape, generator=generator).to(dtype=dtype, device=device)


def rounded_like(impl: str, exact: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """fp32 ``exact`` rounded to ``dtype`` as ``impl`` rounds it: to nearest even, but by truncation
    for bf16 in the kernel under the Triton interpreter (its fp32 -> bf16 cast)."""
    if impl == "triton" and dtype == torch.bfloat16 and _backend.INTERPRETER and exact.device.type == "cpu":
        return (exact.contiguous().view(torch.int32) & -65536).view(torch.float32).to(dtype)
    return exact.to(dtype)


def assert_exact_conv(x, weight, impl):
    """Integer values: every order of the fp32 sums gives the same (exact) sum, so only rounding is left."""
    out = run_impl(impl, conv3d_chunked, x, weight)
    exact = F.conv3d(x.double(), weight.double()).float()  # |sums| < 2**24: exact in fp32 too
    expected = rounded_like(impl, exact, x.dtype)
    assert out.dtype == x.dtype and out.device == x.device
    assert out.shape == expected.shape
    assert out.stride() == torch.empty(expected.shape, memory_format=CL).stride()
    assert torch.equal(out, expected)
    for source in (x, weight):
        assert out.untyped_storage().data_ptr() != source.untyped_storage().data_ptr()


@impl_params()
@given(
    batch=st.integers(1, 2),
    chunks=st.integers(1, 3),
    out_channels=st.integers(1, 100),
    kernel=st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3)),
    extra=st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 9)),
    dtype=st.sampled_from((torch.float16, torch.bfloat16, torch.float32)),
    layout=st.sampled_from(LAYOUTS),
    weight_layout=st.sampled_from(("contiguous", "channels_last", "permuted")),
    seed=st.integers(0, 2**16),
)
@example(batch=2, chunks=3, out_channels=96, kernel=(3, 3, 3), extra=(1, 2, 7), dtype=torch.bfloat16,
         layout="channels_last", weight_layout="contiguous", seed=0)
@example(batch=1, chunks=3, out_channels=3, kernel=(3, 3, 3), extra=(3, 1, 4), dtype=torch.float16,
         layout="strided", weight_layout="contiguous", seed=1)
@pytest.mark.slow
def test_matches_conv3d_on_integer_values(device, impl, batch, chunks, out_channels, kernel, extra, dtype, layout,
                                          weight_layout, seed):
    channels = 32 * chunks
    shape = (batch, channels, *(k + e for k, e in zip(kernel, extra)))
    x = make_layout(integer_tensor(shape, dtype, device, seed), layout)
    weight = make_layout(integer_tensor((out_channels, channels, *kernel), dtype, device, seed + 1), weight_layout)
    assert run_impl(impl, takes_kernel, x) == (impl == "triton")
    assert_exact_conv(x, weight, impl)


@impl_params()
def test_rounds_the_fp32_sum_once(device, impl):
    """fp16 sums past 2048 round to even (ties included), once, from the fp32 accumulator."""
    x = torch.ones(1, 32, 1, 1, 1, dtype=torch.float16, device=device)
    weight = torch.full((2, 32, 1, 1, 1), 64.0, dtype=torch.float16, device=device)
    weight[1, 0], weight[1, 1] = 65.0, 66.0  # 2051: a tie between 2050 and 2052, to even 2052
    out = run_impl(impl, conv3d_chunked, x, weight)
    assert out.flatten().tolist() == [2048.0, 2052.0]
    assert_exact_conv(x, weight, impl)


def tf32_rounded(values: torch.Tensor) -> torch.Tensor:
    """fp32 values rounded to 11 significant bits (TF32), ties to even: through frexp and torch.round in float64."""
    significand, exponent = torch.frexp(values.double())
    return torch.ldexp(torch.round(significand * 2**11) / 2**11, exponent.double()).float()


def tie_values(shape, device, seed):
    """Small integers times a significand TF32 cannot hold: ties both ways (1 + 2**-11 rounds down to even,
    1 + 3 * 2**-11 up), just above a tie, and just below (truncation and ties-away both give other values)."""
    generator = torch.Generator().manual_seed(seed)
    significands = torch.tensor([1 + 2**-11, 1 + 3 * 2**-11, 1 + 2**-11 + 2**-20, 1 + 2**-11 - 2**-20, 1.0])
    picks = significands[torch.randint(0, 5, shape, generator=generator)]
    return (picks * torch.randint(-3, 4, shape, generator=generator)).to(device)


@impl_params()
@pytest.mark.parametrize("rounded_operand", ["x", "weight"])
def test_fp32_operands_round_to_tf32_nearest_even(device, impl, rounded_operand):
    """fp32 is TF32 arithmetic, each operand rounded to nearest even first, as cuDNN's TF32 kernels
    (the other operand integer, so every sum is exact and only the operand rounding shows)."""
    shape, weight_shape = (2, 64, 3, 5, 7), (40, 64, 3, 3, 3)
    x = integer_tensor(shape, torch.float32, device, 0).contiguous(memory_format=CL)
    weight = integer_tensor(weight_shape, torch.float32, device, 1)
    if rounded_operand == "x":
        x = tie_values(shape, device, 2).contiguous(memory_format=CL)
    else:
        weight = tie_values(weight_shape, device, 3)
    assert run_impl(impl, takes_kernel, x) == (impl == "triton")
    out = run_impl(impl, conv3d_chunked, x, weight)
    if impl == "triton":
        expected = F.conv3d(tf32_rounded(x).double(), tf32_rounded(weight).double()).float()
        assert not torch.equal(expected, F.conv3d(x.double(), weight.double()).float())  # the rounding shows
    else:
        expected = F.conv3d(x, weight)
    assert torch.equal(out, expected)


def flat_positions(out: torch.Tensor) -> torch.Tensor:
    """(positions, channels): position index (batch, frame, row, column) flattened, as the op's tiles count them."""
    return out.permute(0, 2, 3, 4, 1).reshape(-1, out.shape[1])


def tail_expectation(x, weight, full, tail_tiles, segments, dtype):
    """``full`` with its last ``tail_tiles`` 128 x 128 tiles replaced by the segment sums added last to first.

    The segments are whole runs of the kernel's K steps (32-channel chunk outer, taps inner): with 3
    chunks, 3 segments are one chunk each and 9 one chunk's taps of one kernel frame each, so every
    segment sum is the op itself on a slice of x and weight (fp32, no rounding), summed as the kernel sums.
    """
    expected = flat_positions(full).clone()
    if not tail_tiles or segments == 1:
        return expected
    kt = weight.shape[2]
    parts = []
    for segment in range(segments):
        chunk, frame = divmod(segment, segments // 3)
        channels = slice(32 * chunk, 32 * chunk + 32)
        frames = slice(frame, frame + 1) if segments == 9 else slice(0, kt)
        x_part = x[:, channels, frame:x.shape[2] - kt + 1 + frame] if segments == 9 else x[:, channels]
        parts.append(flat_positions(conv3d_chunked(x_part.float(), weight[:, channels, frames].float())))
    total = parts[-1]
    for part in parts[-2::-1]:
        total = total + part
    channel_tiles = -(-full.shape[1] // 128)
    tiles = -(-expected.shape[0] // 128) * channel_tiles
    for tile in range(tiles - tail_tiles, tiles):
        rows = slice(tile // channel_tiles * 128, tile // channel_tiles * 128 + 128)
        cols = slice(tile % channel_tiles * 128, tile % channel_tiles * 128 + 128)
        expected[rows, cols] = rounded_like("triton", total[rows, cols], dtype)
    return expected


@cuda
@pytest.mark.skipif(KERNEL_DEVICE != "cuda", reason="needs CUDA: the interpreter's dots are numpy's, rounded by block shape")
@given(
    batch=st.integers(1, 2),
    extra=st.tuples(st.integers(0, 2), st.integers(0, 9), st.integers(0, 11)),
    out_channels=st.integers(1, 200),
    tail=st.integers(0, 6),
    segments=st.sampled_from((1, 3, 9)),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
@example(batch=1, extra=(1, 7, 9), out_channels=192, tail=3, segments=3, layout="channels_last", seed=0)
@example(batch=2, extra=(0, 5, 6), out_channels=130, tail=6, segments=9, layout="permuted", seed=1)
def test_tail_tiles_add_their_k_segments_last_to_first(batch, extra, out_channels, tail, segments, layout, seed):
    """The last tail_tiles tiles of 128 positions x 128 channels: each of tail_segments runs of K steps summed
    alone, the sums added from the last run to the first, rounded once; every other tile as without them.
    CUDA and fp32 only. The expectation sums the segments in fp32 (TF32 dots on the GPU), and a GPU's 16-bit
    and TF32 MMA instructions need not add within a step alike. Under the interpreter a dot is numpy's
    matmul, whose rounding can depend on the block's shape (OpenBLAS's AVX2 kernels on an AMD EPYC summed a
    K step of the tail's 128 x 128 blocks and of the other tiles' 256 x (128 + 64) ones otherwise, in fp32
    and fp16 alike), so there the expectation is not the kernel's order."""
    dtype = torch.float32
    x = make_layout(random_spread((batch, 96, *(3 + e for e in extra)), dtype, seed, device=KERNEL_DEVICE), layout)
    weight = random_spread((out_channels, 96, 3, 3, 3), dtype, seed + 1, device=KERNEL_DEVICE)
    full = conv3d_chunked(x, weight)
    tiles = output_tiles(x, weight)
    tail = min(tail, tiles)
    out = conv3d_chunked(x, weight, tail_tiles=tail, tail_segments=segments)
    assert out.stride() == full.stride()
    assert torch.equal(flat_positions(out), tail_expectation(x, weight, full, tail, segments, dtype))
    if tail and segments > 1:
        assert not torch.equal(out, full)  # spread values: the order shows


@pytest.mark.skipif(KERNEL_DEVICE is None, reason="needs the Triton kernels")
@given(
    batch=st.integers(1, 2),
    chunks=st.integers(1, 2),
    extra=st.tuples(st.integers(0, 1), st.integers(0, 3), st.integers(0, 5)),
    out_channels=st.integers(1, 140),
    tail=st.integers(1, 3),
    segments=st.integers(2, 54),
    dtype=st.sampled_from((torch.float16, torch.bfloat16, torch.float32)),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
@example(batch=1, chunks=2, extra=(0, 0, 0), out_channels=130, tail=2, segments=54, dtype=torch.float32,
         layout="contiguous", seed=0)  # one K step a run
@example(batch=2, chunks=1, extra=(1, 3, 5), out_channels=140, tail=3, segments=7, dtype=torch.bfloat16,
         layout="permuted", seed=1)  # runs of 3 and 4 steps
@settings(max_examples=8)  # each interpreted example ~2-4 s on CI's CPU; the CUDA test above checks the order itself
def test_tail_tiles_sum_every_k_step_once(batch, chunks, extra, out_channels, tail, segments, dtype, layout, seed):
    """The tail launch on integer values, whose sums are exact in any order: every K step in exactly one run, for
    any run count the check may try (uneven runs included), and the tiles before the tail untouched. On CPU
    through the interpreter too (the order itself is the CUDA test above)."""
    shape = (batch, 32 * chunks, *(3 + e for e in extra))
    x = make_layout(integer_tensor(shape, dtype, KERNEL_DEVICE, seed), layout)
    weight = integer_tensor((out_channels, 32 * chunks, 3, 3, 3), dtype, KERNEL_DEVICE, seed + 1)
    segments = min(segments, 27 * chunks)  # at most one run a K step
    tail = min(tail, output_tiles(x, weight))
    out = conv3d_chunked(x, weight, tail_tiles=tail, tail_segments=segments)
    exact = F.conv3d(x.double(), weight.double()).float()  # |sums| < 2**24: exact in fp32 too
    assert out.stride() == torch.empty(exact.shape, memory_format=CL).stride()
    assert torch.equal(out, rounded_like("triton", exact, dtype))


# NaN with every significand bit set (rounding carries it out of the exponent), NaN with only the
# lowest bit set (TF32 keeps none of its significand: read as is, it is infinity), infinities.
SPECIAL_FP32_BITS = (0x7FFFFFFF, 0x7F800001, 0xFFFFFFFF, 0x7F800000, 0xFF800000)


@impl_params()
@pytest.mark.filterwarnings("ignore:invalid value encountered in matmul:RuntimeWarning")  # the interpreter's numpy
@pytest.mark.parametrize("special_operand", ["x", "weight"])
def test_fp32_nan_and_infinity_operands(device, impl, special_operand):
    """NaN operands give NaN wherever they are summed and infinities infinities (or NaN), as in F.conv3d."""
    shape, weight_shape = (1, 32, 3, 4, 9), (20, 32, 3, 3, 3)
    x = integer_tensor(shape, torch.float32, device, 4, low=1).contiguous(memory_format=CL)
    weight = integer_tensor(weight_shape, torch.float32, device, 5, low=1)
    special = torch.tensor(SPECIAL_FP32_BITS, dtype=torch.int64).to(torch.int32).view(torch.float32).to(device)
    if special_operand == "x":
        # Corner rows and columns each reach outputs no other special value reaches (x, w >= 1: no cancelling).
        x[0, 2, 1, (0, 3, 0, 3, 0), (8, 8, 4, 0, 0)] = special
    else:
        weight[3:8, 2, 1, 1, 1] = special  # one per output channel
    out = run_impl(impl, conv3d_chunked, x, weight)
    expected = F.conv3d(x.double(), weight.double()).float()
    assert expected.isnan().any() and expected.isinf().any()
    assert torch.equal(out.isnan(), expected.isnan())
    assert torch.equal(out.nan_to_num(0.0, 1.0, -1.0), expected.nan_to_num(0.0, 1.0, -1.0))


@pytest.mark.parametrize(
    "settings,tf32",
    [
        # Convs and RNNs set apart: torch's legacy allow_tf32 getter raises then.
        ([("cuda", "rnn", "tf32"), ("cuda", "conv", "ieee")], False),
        ([("cuda", "rnn", "ieee"), ("cuda", "conv", "tf32")], True),
        ([("legacy", False)], False),  # convs at "none", inherited from above: no TF32
        ([("legacy", True)], True),
        ([("legacy", True), ("enabled", False)], False),  # no cuDNN: ATen's own conv kernels
    ],
    ids=["conv-ieee", "conv-tf32", "allow_tf32-False", "allow_tf32-True", "cudnn-off"],
)
def test_fp32_takes_the_kernel_only_where_cudnn_may_use_tf32(settings, tf32, fp32_precision, monkeypatch):
    """fp32 runs the TF32 kernel exactly when ATen's convs may use TF32, set through either API."""
    for setting in settings:
        if setting[0] == "legacy":
            torch.backends.cudnn.allow_tf32 = setting[1]
        elif setting[0] == "enabled":
            monkeypatch.setattr(torch.backends.cudnn, "enabled", setting[1])
        else:
            fp32_precision(*setting)
    assert _backend.cudnn_convs_may_use_tf32() is tf32
    x = torch.ones(1, 32, 3, 3, 3)
    assert takes_kernel(x) == (tf32 and takes_kernel(x.to(torch.bfloat16)))
    assert torch.equal(conv3d_chunked(x, torch.ones(2, 32, 3, 3, 3)), torch.full((1, 2, 1, 1, 1), 864.0))


def test_tf32_rounding_and_truncation_helpers_match_float64_arithmetic():
    """rounded_to_tf32 and truncated_to_tf32 against frexp arithmetic, over every exponent and ties both ways."""
    generator = torch.Generator().manual_seed(6)
    values = torch.cat([
        torch.randn(4096, generator=generator) * torch.exp2(torch.randint(-126, 127, (4096,), generator=generator)),
        tie_values((512,), "cpu", 7),
        torch.tensor([0.0, -0.0, 2.0**-149, -(2.0**-130)]),  # zeros and subnormals
    ]).float()
    # TF32's grid step: 2**-10 of the value's binade, and subnormals' fixed step 2**-136 below 2**-126.
    _, exponent = torch.frexp(values.double())
    step = torch.exp2(exponent.clamp_min(-125).double() - 11)
    rounded = (torch.round(values.double() / step) * step).float()
    truncated = (torch.trunc(values.double() / step) * step).float()
    assert torch.equal(rounded_to_tf32(values), rounded)
    assert torch.equal(truncated_to_tf32(values), truncated)
    assert not torch.equal(truncated, rounded)  # the two differ on these values
    special = torch.tensor(SPECIAL_FP32_BITS, dtype=torch.int64).to(torch.int32).view(torch.float32)
    assert rounded_to_tf32(special).isnan().tolist() == special.isnan().tolist()
    # A NaN whose payload lies only in the dropped bits reads as infinity.
    assert truncated_to_tf32(special).isinf().tolist() == [False, True, False, True, True]


@impl_params()
@pytest.mark.parametrize("layout", ["channels_last", "permuted"])
def test_truncate_x_reads_fp32_x_as_tf32_by_truncation(device, impl, layout):
    """truncate_x: fp32 x with its dropped bits cleared, then the conv; for x on the TF32 grid the same
    bits as the rounding kernel (the decoder's TF32-grid inputs), and on no other dtype any change."""
    shape, weight_shape = (2, 64, 3, 5, 7), (40, 64, 3, 3, 3)
    x = make_layout(random_spread(shape, torch.float32, 8, device=device), layout)
    weight = random_spread(weight_shape, torch.float32, 9, device=device)
    truncated = run_impl(impl, conv3d_chunked, x, weight, truncate_x=True)
    assert torch.equal(truncated, run_impl(impl, conv3d_chunked, truncated_to_tf32(x), weight))
    assert not torch.equal(truncated, run_impl(impl, conv3d_chunked, x, weight))
    if impl == "triton":  # TF32 arithmetic: x already rounded reads the same either way
        on_grid = rounded_to_tf32(x)
        assert torch.equal(run_impl(impl, conv3d_chunked, on_grid, weight, truncate_x=True),
                           run_impl(impl, conv3d_chunked, x, weight))
    half = integer_tensor(shape, torch.float16, device, 10).contiguous(memory_format=CL)
    half_weight = integer_tensor(weight_shape, torch.float16, device, 11)
    assert torch.equal(run_impl(impl, conv3d_chunked, half, half_weight, truncate_x=True),
                       run_impl(impl, conv3d_chunked, half, half_weight))


@impl_params()
@pytest.mark.filterwarnings("ignore:invalid value encountered in matmul:RuntimeWarning")  # the interpreter's numpy
def test_truncate_x_reads_nan_and_infinity_as_truncation_does(device, impl):
    """Special x values under truncate_x: as truncated_to_tf32 reads them (a low-payload NaN as infinity)."""
    shape, weight_shape = (1, 32, 3, 4, 9), (20, 32, 3, 3, 3)
    x = integer_tensor(shape, torch.float32, device, 12, low=1).contiguous(memory_format=CL)
    weight = integer_tensor(weight_shape, torch.float32, device, 13, low=1)
    special = torch.tensor(SPECIAL_FP32_BITS, dtype=torch.int64).to(torch.int32).view(torch.float32).to(device)
    x[0, 2, 1, (0, 3, 0, 3, 0), (8, 8, 4, 0, 0)] = special
    out = run_impl(impl, conv3d_chunked, x, weight, truncate_x=True)
    expected = F.conv3d(truncated_to_tf32(x).double(), weight.double()).float()
    assert expected.isnan().any() and expected.isinf().any()
    assert torch.equal(out.isnan(), expected.isnan())
    finite = ~expected.isnan()
    assert torch.equal(out[finite].isinf(), expected[finite].isinf())
    assert torch.equal(out[expected.isinf()], expected[expected.isinf()])


@impl_params()
@pytest.mark.parametrize("dtype,channels,allow_tf32", [(torch.float32, 32, False), (torch.float64, 32, True),
                                                       (torch.bfloat16, 48, True)], ids=str)
def test_other_dtypes_and_channel_counts_take_the_reference(device, impl, dtype, channels, allow_tf32, monkeypatch):
    """fp32 where cuDNN may not use TF32, float64 and channels not in whole 32-chunks: F.conv3d itself."""
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", allow_tf32)
    x = make_layout(torch.randn(2, channels, 3, 4, 5, device=device).to(dtype), "permuted")
    weight = torch.randn(5, channels, 3, 3, 3, device=device).to(dtype)
    assert not takes_kernel(x)
    out = run_impl(impl, conv3d_chunked, x, weight)
    expected = F.conv3d(x, weight)
    assert torch.equal(out, expected) and out.stride() == torch.empty(expected.shape, memory_format=CL).stride()


@pytest.mark.parametrize(
    "x,weight,error,match",
    [
        ("x", torch.ones(1, 32, 3, 3, 3), TypeError, "x must be a torch.Tensor"),
        (torch.ones(1, 32, 3, 3, 3), torch.ones(1, 32, 3, 3, 3), TypeError, "truncate_x must be a bool"),
        (torch.ones(1, 32, 3, 3), torch.ones(1, 32, 3, 3, 3), ValueError, "x must be a 5-D"),
        (torch.ones(1, 32, 3, 3, 3), torch.ones(1, 32, 3, 3), ValueError, "weight must be a 5-D"),
        (torch.ones(1, 32, 3, 3, 3), torch.ones(1, 32, 3, 3, 3, dtype=torch.float16), TypeError, "weight must have the dtype"),
        (torch.ones(1, 32, 3, 3, 3), torch.ones(4, 16, 3, 3, 3), ValueError, "weight must take x's 32 channels"),
        (torch.ones(1, 32, 2, 3, 3), torch.ones(4, 32, 3, 3, 3), ValueError, "must fit in x's frames"),
        (torch.ones(1, 32, 3, 3, 2), torch.ones(4, 32, 3, 3, 3), ValueError, "must fit in x's width"),
    ],
)
def test_invalid_arguments_are_named(x, weight, error, match):
    truncate_x = 1 if "truncate_x" in match else False
    with pytest.raises(error, match=match):
        conv3d_chunked(x, weight, truncate_x)
    if isinstance(x, torch.Tensor) and truncate_x is False:  # the op itself checks too (a call that skips the wrapper)
        with pytest.raises(error, match=match):
            torch.ops.wanops.conv3d_chunked(x, weight)


@pytest.mark.parametrize(
    "tail,error,match",
    [
        (dict(tail_tiles=1.0), TypeError, "tail_tiles must be an int"),
        (dict(tail_segments="3"), TypeError, "tail_segments must be an int"),
        (dict(tail_tiles=3), ValueError, r"tail_tiles must be in \[0, 2\]"),  # 180 positions x 4 channels: 2 tiles
        (dict(tail_tiles=-1), ValueError, r"tail_tiles must be in \[0, 2\]"),
        (dict(tail_tiles=1, tail_segments=0), ValueError, r"tail_segments must be in \[1, 27\]"),
        (dict(tail_tiles=1, tail_segments=28), ValueError, r"tail_segments must be in \[1, 27\]"),  # 27 K steps
    ],
)
def test_invalid_tail_arguments_are_named(tail, error, match):
    x, weight = torch.ones(1, 32, 8, 7, 8), torch.ones(4, 32, 3, 3, 3)
    with pytest.raises(error, match=match):
        conv3d_chunked(x, weight, **tail)
    if error is ValueError:  # the op itself checks too
        with pytest.raises(error, match=match):
            torch.ops.wanops.conv3d_chunked(x, weight, False, tail.get("tail_tiles", 0), tail.get("tail_segments", 1))


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.slow
def test_opcheck(requires_grad):
    for device in ["cpu"] + (["cuda"] if HAS_CUDA else []):
        # Integer values (exact in any order and in TF32) run the kernel where it can, fp32 as TF32.
        dtype = torch.float32 if requires_grad else torch.float16
        for layout in ("contiguous", "channels_last", "permuted"):
            x = make_layout(integer_tensor((2, 32, 3, 4, 5), dtype, device, 0), layout).requires_grad_(requires_grad)
            weight = integer_tensor((7, 32, 3, 2, 3), dtype, device, 1).requires_grad_(requires_grad)
            torch.library.opcheck(torch.ops.wanops.conv3d_chunked.default, (x, weight))
            torch.library.opcheck(torch.ops.wanops.conv3d_chunked.default, (x, weight, True))
            torch.library.opcheck(torch.ops.wanops.conv3d_chunked.default, (x, weight, False, 1, 3))


def test_compiles_without_graph_breaks():
    x = integer_tensor((1, 32, 3, 4, 6), torch.float16, "cpu", 2).contiguous(memory_format=CL)
    weight = integer_tensor((5, 32, 3, 3, 3), torch.float16, "cpu", 3)
    compiled = torch.compile(lambda a, b: conv3d_chunked(a, b) * 2, fullgraph=True, backend="aot_eager")
    out = compiled(x, weight)
    eager = conv3d_chunked(x, weight) * 2
    assert torch.equal(out, eager) and out.stride() == eager.stride()


def random_spread(shape, dtype, seed, spread=8, device="cuda"):
    """Normal values times 2**k, k uniform in [-spread, spread]: sums whose rounding shows any change of order."""
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator) * torch.exp2(torch.randint(-spread, spread + 1, shape, generator=generator))
    return values.to(device=device, dtype=dtype)


@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize(
    "x_shape,out_channels",
    [((1, 96, 6, 482, 834), 96), ((1, 96, 3, 482, 834), 96), ((1, 96, 6, 482, 834), 3), ((2, 96, 4, 34, 66), 96),
     ((1, 96, 6, 242, 418), 96)],
    ids=["96ch-480x832", "96ch-first-chunk", "head", "batch2", "96ch-240x416"],
)
def test_gives_cudnns_bits_where_cudnn_sums_in_chunks_on_cuda(dtype, x_shape, out_channels):
    """Where stock's conv runs a cuDNN kernel of the chunk-order families, the same bits (at the decoder's sizes).

    On the H200 (cuDNN 9.19) every case but the fp16 and fp32 heads runs such a kernel; the heads'
    (indexed kernels with a 64-channel K tile) add in another order, and the decoder's check
    keeps cuDNN's conv there. fp32 is cuDNN's default TF32.
    """
    skip_unless_free_gpu_memory(4)
    x = random_spread(x_shape, dtype, 0).contiguous(memory_format=CL)
    weight = (random_spread((out_channels, x_shape[1], 3, 3, 3), dtype, 1).float() * 0.05).to(dtype)
    with torch.no_grad():
        stock, kernels = decoder_module._conv_kernels(lambda a: F.conv3d(a.contiguous(), weight), x)
        out = conv3d_chunked(x, weight)
    in_chunk_order = decoder_module._sums_in_chunk_order(kernels)
    if not in_chunk_order:
        pytest.skip(f"cuDNN runs {sorted(kernels)} here, not a kernel of the chunk-order families")
    assert torch.equal(out, stock) and out.stride() == torch.empty(stock.shape, memory_format=CL).stride()


@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
def test_wan21_convs_run_in_chunk_order_on_cuda(dtype):
    """The 96 -> 96 convs of a Wan2.1 480x832 decode meet the chunk-order rule, or the lever silently stopped paying."""
    skip_unless_free_gpu_memory(4)
    x = random_spread((1, 96, 6, 482, 834), dtype, 2).contiguous(memory_format=CL)
    weight = random_spread((96, 96, 3, 3, 3), dtype, 3)
    with torch.no_grad():
        _, kernels = decoder_module._conv_kernels(lambda a: F.conv3d(a.contiguous(), weight), x)
    assert decoder_module._sums_in_chunk_order(kernels), sorted(kernels)


@cuda
@pytest.mark.parametrize(
    "x_shape,out_channels",
    [((1, 96, 6, 482, 834), 96), ((1, 192, 6, 242, 418), 96), ((1, 384, 4, 122, 210), 384),
     ((1, 384, 6, 122, 210), 384), ((1, 192, 6, 242, 418), 192), ((1, 192, 3, 362, 642), 192),
     ((1, 384, 4, 182, 322), 384)],
    ids=["96ch-480x832", "192-to-96ch-240x416", "384ch-first-chunk-120x208", "384ch-120x208", "192ch-240x416",
         "192ch-first-chunk-360x640", "384ch-360x640"],
)
def test_tf32_grid_inputs_give_cudnns_bits_on_cuda(x_shape, out_channels):
    """fp32 x rounded to the TF32 grid and read with truncate_x: cuDNN's bits of the unrounded x, wherever
    cuDNN runs a TF32 kernel of the chunk order (its 128x128x32 kernels of the 384-channel convs included),
    and with the tail split the decoder's check finds where it runs the segment_k_on one (on an H200 the
    192-channel convs, 36 tiles in 3 runs, and the 384-channel ones at 4x182x322, 27 tiles in 3 runs)."""
    skip_unless_free_gpu_memory(4)
    x = random_spread(x_shape, torch.float32, 4).contiguous(memory_format=CL)
    conv = torch.nn.Conv3d(x_shape[1], out_channels, 3, bias=False, device="cuda")
    with torch.no_grad():
        conv.weight.copy_(random_spread(conv.weight.shape, torch.float32, 5) * 0.05)
        stock, kernels = decoder_module._conv_kernels(lambda a: F.conv3d(a.contiguous(), conv.weight), x)
        order = decoder_module._sums_in_chunk_order(kernels)
        if not order:
            pytest.skip(f"cuDNN runs {sorted(kernels)} here, not a kernel of the chunk-order families")
        grid_x = rounded_to_tf32(x)
        tail = (0, 1)
        if order is decoder_module.ChunkedConv.TF32_GRID_ONLY_TAIL_SPLIT:
            tail = decoder_module._tail_split_giving(
                stock, lambda split: decoder_module._chunked_conv(conv, grid_x, order, True, split),
                lambda tiles: decoder_module._tail_segment_counts(conv, x, tiles))
            assert tail is not None and tail[0] and tail[1] > 1, tail
        out = decoder_module._chunked_conv(conv, grid_x, order, truncate_x=True, tail=tail)
    assert torch.equal(out, stock)
