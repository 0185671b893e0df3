"""wanops::upsample_nearest_2x against diffusers' WanUpsample of the frame-major frames, bit for bit."""

import pytest
import torch
from conftest import (
    DTYPES,
    HAS_CUDA,
    LAYOUTS,
    cuda,
    impl_params,
    make_layout,
    random_tensor,
    run_impl,
    skip_unless_free_gpu_memory,
)
from diffusers.models.autoencoders.autoencoder_kl_wan import WanUpsample
from hypothesis import example, given
from hypothesis import strategies as st

from torch_wanops.ops import upsample_nearest_2x

STOCK_UPSAMPLE = WanUpsample(scale_factor=(2.0, 2.0), mode="nearest-exact")


def stock(x):
    """What WanResample hands its Conv2d."""
    batch, channels, frames, height, width = x.shape
    return STOCK_UPSAMPLE(x.permute(0, 2, 1, 3, 4).reshape(batch * frames, channels, height, width))


def assert_matches(x, impl, channels_last):
    out = run_impl(impl, upsample_nearest_2x, x, channels_last)
    expected = stock(x)
    assert out.dtype == x.dtype and out.device == x.device and out.shape == expected.shape
    assert torch.equal(out, expected)
    if channels_last:
        assert out.is_contiguous(memory_format=torch.channels_last)
    else:
        assert out.stride() == expected.stride()
    if out.numel():
        assert out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


@impl_params()
@given(
    shape=st.tuples(st.integers(1, 2), st.integers(1, 40), st.integers(1, 3), st.integers(1, 6), st.integers(1, 20)),
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(LAYOUTS),
    channels_last=st.booleans(),
    seed=st.integers(0, 2**16),
)
# Channels at stride 1: stock's 2-D frames are channels_last, and so is its output.
@example(shape=(2, 3, 2, 3, 5), dtype=torch.bfloat16, layout="channels_last", channels_last=False, seed=0)
def test_matches_stock_upsample(device, impl, shape, dtype, layout, channels_last, seed):
    x = make_layout(random_tensor(shape, dtype, device, seed) * 8, layout)
    assert_matches(x, impl, channels_last)


@impl_params()
@pytest.mark.parametrize("channels_last", [False, True])
def test_a_cropped_time_view(device, impl, channels_last):
    """x a view of the last frames of a longer buffer (as a chunk of a frame loop)."""
    buffer = random_tensor((1, 6, 5, 3, 4), torch.bfloat16, device, 3)
    assert_matches(buffer[:, :, 2:], impl, channels_last)


@impl_params()
def test_special_values_are_copied(device, impl):
    values = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 1e-40, 65504.0], dtype=torch.float32)
    x = values.view(1, 1, 1, 2, 3).to(device)
    out = run_impl(impl, upsample_nearest_2x, x)
    expected = stock(x)
    assert torch.equal(out.isnan(), expected.isnan())
    assert torch.equal(torch.nan_to_num(out).view(torch.int32), torch.nan_to_num(expected).view(torch.int32))


@impl_params()
def test_float64_takes_reference(device, impl):
    x = torch.randn(1, 3, 2, 2, 5, dtype=torch.float64, device=device)
    assert_matches(x, impl, True)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_opcheck(requires_grad):
    for device in ["cpu"] + (["cuda"] if HAS_CUDA else []):
        for layout in ("contiguous", "channels_last", "permuted"):
            x = make_layout(torch.randn(2, 3, 2, 4, 5, device=device), layout).requires_grad_(requires_grad)
            for channels_last in (False, True):
                torch.library.opcheck(torch.ops.wanops.upsample_nearest_2x.default, (x, channels_last))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("channels_last", [False, True])
def test_backward_matches_stock_autograd(dtype, channels_last):
    """Each input pixel's gradient is its 2x2 block's sum, bit for bit as stock's autograd gives it:
    summed in fp32 (stock upsamples in fp32 whatever the dtype) in ATen's order, rounded once.

    (gradcheck does not apply: the fp32 round trip is part of stock's function.) Random
    gradients with a wide range make the order of the sums and the roundings visible.
    """
    x = torch.randn(2, 3, 2, 3, 4).to(dtype)
    grad = (torch.randn(4, 3, 6, 8) * torch.logspace(-4, 4, 8)).to(dtype)  # within float16
    if channels_last:
        grad = grad.contiguous(memory_format=torch.channels_last)
    ours, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
    upsample_nearest_2x(ours, channels_last).backward(grad)
    stock(theirs).backward(grad)
    assert torch.equal(ours.grad, theirs.grad)


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(dynamic):
    torch._dynamo.reset()

    def resample_input(x):
        return upsample_nearest_2x(x * 2, True) + 1

    compiled = torch.compile(resample_input, fullgraph=True, dynamic=dynamic, backend="inductor")
    for width in (5, 7):
        x = torch.randn(1, 3, 2, 4, width)
        expected, got = resample_input(x), compiled(x)
        assert torch.equal(got, expected) and got.stride() == expected.stride()


INVALID = [
    (lambda x: upsample_nearest_2x(x[0]), ValueError, "x must be a 5-D"),
    (lambda x: upsample_nearest_2x("x"), TypeError, "x must be a torch.Tensor"),
    (lambda x: upsample_nearest_2x(x, 1), TypeError, "channels_last must be a bool"),
]


@pytest.mark.parametrize("call,error,message", INVALID, ids=[m for _, _, m in INVALID])
def test_invalid_arguments_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(torch.randn(2, 3, 1, 4, 5))


# The upsamplers' inputs in the decoders: (channels, frames, height, width) at 480x832.
REAL_SHAPES = [(384, 1, 60, 104), (384, 2, 60, 104), (384, 4, 120, 208), (192, 4, 240, 416), (1024, 2, 30, 52),
               (512, 4, 120, 208)]


@cuda
@pytest.mark.parametrize("layout", ["contiguous", "permuted"])
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_real_decoder_sizes_on_cuda(dtype, shape, channels_last, layout):
    x = make_layout(random_tensor((1, *shape), dtype, "cuda", 0), layout)
    assert_matches(x, "triton", channels_last)


@cuda
def test_int64_indexing_beyond_2_pow_31_output_elements():
    skip_unless_free_gpu_memory(12)
    x = torch.randn(1, 96, 4, 1024, 1400, device="cuda", dtype=torch.bfloat16)
    out = upsample_nearest_2x(x, True)
    assert out.numel() > 2**31
    # The far end (offsets past 2**31) and the start against the stock upsample of those pixels.
    assert torch.equal(out[-1:, :, -4:, -6:], stock(x[:, :, -1:, -2:, -3:]))
    assert torch.equal(out[:1, :, :4, :6], stock(x[:, :, :1, :2, :3]))
