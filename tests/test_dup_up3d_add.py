"""wanops::dup_up3d_add against diffusers' DupUp3D plus the add, bit for bit and stride for stride."""

import pytest
import torch
from conftest import (
    DTYPES,
    HAS_CUDA,
    cuda,
    dup_cases,
    impl_params,
    main_shape,
    make_layout,
    random_tensor,
    run_impl,
    skip_unless_free_gpu_memory,
)
from diffusers.models.autoencoders.autoencoder_kl_wan import DupUp3D
from hypothesis import given
from hypothesis import strategies as st

from torch_wanops.ops import dup_up3d_add



def stock(main, source, out_channels, factor_t, factor_s, drop_first):
    module = DupUp3D(source.shape[1], out_channels, factor_t=factor_t, factor_s=factor_s)
    return main + module(source, first_chunk=drop_first), module.repeats


def assert_matches(main, source, out_channels, factor_t, factor_s, drop_first, impl):
    expected, repeats = stock(main, source, out_channels, factor_t, factor_s, drop_first)
    out = run_impl(impl, dup_up3d_add, main, source, factor_t, factor_s, repeats, drop_first)
    assert out.dtype == main.dtype and out.shape == expected.shape
    assert out.stride() == expected.stride()
    assert torch.equal(out, expected)
    for tensor in (main, source):
        assert out.untyped_storage().data_ptr() != tensor.untyped_storage().data_ptr()


@impl_params()
@given(case=dup_cases())
def test_matches_diffusers_dupup3d(device, impl, case):
    (batch, in_channels, out_channels, frames, height, width, factor_t, factor_s, drop_first, dtype, main_layout,
     source_layout, seed) = case
    source = make_layout(random_tensor((batch, in_channels, frames, height, width), dtype, device, seed), source_layout)
    shape = main_shape(source.shape, out_channels, factor_t, factor_s, drop_first)
    main = make_layout(random_tensor(shape, dtype, device, seed + 1), main_layout)
    assert_matches(main, source, out_channels, factor_t, factor_s, drop_first, impl)


@impl_params()
def test_rounding_ties_go_to_even(device, impl):
    """Sums that sit exactly between two bf16/fp16 values must round like ATen (to even)."""
    for dtype in (torch.bfloat16, torch.float16):
        eps = torch.finfo(dtype).eps
        main = torch.tensor([1.0, 1.0 + eps, -1.0, 3.0, 1e4, -1e4], dtype=dtype).repeat(4)
        source = torch.tensor([eps / 2, eps / 2, -eps / 2, eps, 7.0, -7.0], dtype=dtype).repeat(4)
        main = main.reshape(1, 1, 1, 4, 6).to(device)
        source = source.reshape(1, 1, 1, 4, 6).to(device)
        assert_matches(main, source, 1, 1, 1, False, impl)


@impl_params()
def test_float64_takes_reference(device, impl):
    source = torch.randn(1, 4, 2, 3, 3, dtype=torch.float64, device=device)
    main = torch.randn(1, 4, 3, 6, 6, dtype=torch.float64, device=device)
    assert_matches(main, source, 4, 2, 2, True, impl)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "permuted"])
def test_opcheck(requires_grad, layout):
    devices = ["cpu"] + (["cuda"] if HAS_CUDA else [])
    for device in devices:
        source = make_layout(torch.randn(2, 4, 2, 3, 3, device=device), layout).requires_grad_(requires_grad)
        for factor_t, drop_first in ((2, True), (2, False), (1, False)):
            shape = main_shape(source.shape, 4, factor_t, 2, drop_first)
            main = make_layout(torch.randn(shape, device=device), layout).requires_grad_(requires_grad)
            torch.library.opcheck(torch.ops.wanops.dup_up3d_add.default, (main, source, factor_t, 2, 4 * factor_t, drop_first))


@pytest.mark.parametrize("drop_first", [False, True])
def test_gradcheck(drop_first):
    source = torch.randn(1, 4, 2, 2, 3, dtype=torch.float64, requires_grad=True)
    main = torch.randn(main_shape(source.shape, 2, 2, 2, drop_first), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda m, s: dup_up3d_add(m, s, 2, 2, 4, drop_first), (main, source))


def test_backward_sums_duplicated_positions():
    source = torch.randn(1, 4, 2, 2, 3, requires_grad=True)
    main = torch.randn(main_shape(source.shape, 2, 2, 2, True), requires_grad=True)
    grad = torch.randn(main.shape)
    got = torch.autograd.grad(dup_up3d_add(main, source, 2, 2, 4, True), (main, source), grad)
    expected = torch.autograd.grad(stock(main, source, 2, 2, 2, True)[0], (main, source), grad)
    assert torch.equal(got[0], expected[0])
    torch.testing.assert_close(got[1], expected[1], rtol=0, atol=1e-6)  # fp32 sums in another order


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(dynamic):
    torch._dynamo.reset()

    def block_tail(main, source):
        return dup_up3d_add(main * 2, source, 2, 2, 8, True) - 1

    compiled = torch.compile(block_tail, fullgraph=True, dynamic=dynamic)
    for frames, width in ((1, 3), (2, 5)):
        source = torch.randn(1, 4, frames, 2, width)
        main = torch.randn(main_shape(source.shape, 4, 2, 2, True)).contiguous(memory_format=torch.channels_last_3d)
        expected = block_tail(main, source)
        got = compiled(main, source)
        assert torch.equal(got, expected) and got.stride() == expected.stride()


def _args(**override):
    source = torch.randn(1, 4, 2, 3, 3)
    main = torch.randn(1, 4, 3, 6, 6)
    args = dict(main=main, source=source, factor_t=2, factor_s=2, repeats=8, drop_first=True)
    args.update(override)
    return args


INVALID = [
    (dict(main=torch.randn(4, 3, 6, 6)), ValueError, "main must be a 5-D"),
    (dict(source="s"), TypeError, "source must be a torch.Tensor"),
    (dict(source=torch.randn(1, 4, 2, 3, 3, dtype=torch.float64)), TypeError, "source must have the dtype of main"),
    (dict(factor_t=3), ValueError, "factor_t must be a positive power of two"),
    (dict(factor_s=0), ValueError, "factor_s must be a positive power of two"),
    (dict(factor_t=2.0), TypeError, "factor_t must be an int"),
    (dict(repeats=0), ValueError, "repeats must be positive"),
    (dict(repeats=3), ValueError, "repeats=3 is inconsistent"),
    (dict(repeats=16), ValueError, "main must have shape"),
    (dict(drop_first=False), ValueError, "main must have shape"),
    (dict(drop_first=1), TypeError, "drop_first must be a bool"),
]


@pytest.mark.parametrize("override,error,message", INVALID, ids=[m for _, _, m in INVALID])
def test_invalid_arguments_name_the_argument(override, error, message):
    with pytest.raises(error, match=message):
        dup_up3d_add(**_args(**override))


@cuda
def test_source_on_other_device_is_rejected():
    args = _args(main=torch.randn(1, 4, 3, 6, 6, device="cuda"))
    with pytest.raises(ValueError, match="source must be on the device of main"):
        dup_up3d_add(**args)


# Wan2.2 decoder shortcuts at 480x832: (in, out, factor_t, latent-grid frames, height, width).
REAL_SHAPES = [
    (1024, 1024, 2, 1, 30, 52),
    (1024, 1024, 2, 2, 60, 104),
    (1024, 512, 1, 4, 120, 208),
    (512, 256, 1, 4, 240, 416),
]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "permuted"])
@pytest.mark.parametrize("drop_first", [False, True])
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_real_decoder_sizes_on_cuda(dtype, layout, drop_first, shape):
    in_channels, out_channels, factor_t, frames, height, width = shape
    source = make_layout(random_tensor((1, in_channels, frames, height, width), dtype, "cuda", 0), layout)
    main = make_layout(
        random_tensor(main_shape(source.shape, out_channels, factor_t, 2, drop_first), dtype, "cuda", 1), layout
    )
    assert_matches(main, source, out_channels, factor_t, 2, drop_first, "triton")


@cuda
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_int64_indexing_beyond_2_pow_31_elements(layout):
    skip_unless_free_gpu_memory(40)
    source = make_layout(torch.randn(1, 256, 4, 512, 520, device="cuda", dtype=torch.bfloat16), layout)
    main = make_layout(torch.randn(1, 256, 8, 1024, 1040, device="cuda", dtype=torch.bfloat16), layout)
    assert main.numel() > 2**31
    assert_matches(main, source, 256, 2, 2, False, "triton")


@st.composite
def elementwise_operands(draw):
    shape = tuple(draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=5, max_size=5)))
    operands = []
    for _ in range(2):
        order = draw(st.permutations(range(5)))
        base = torch.empty([shape[d] for d in order]).permute([order.index(d) for d in range(5)])
        if draw(st.booleans()):  # a frame slice of a longer tensor, as DupUp3D's drop_first makes
            longer = torch.empty([shape[d] + (1 if d == 2 else 0) for d in order])
            base = longer.permute([order.index(d) for d in range(5)])[:, :, 1:]
        operands.append(base)
    return operands


@given(operands=elementwise_operands())
def test_output_strides_follow_tensoriterator(operands):
    from torch_wanops.ops._common import elementwise_output_strides

    a, b = operands
    assert elementwise_output_strides(a.shape, a.stride(), b.stride()) == (a + b).stride()
