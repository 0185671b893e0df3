"""wanops::bias_add_contiguous_norm: bias_add_contiguous's tensor, bit for bit (residuals, raw residuals and
DupUp3D shortcuts alike), and its fp32 channel norm in channel_norm_kernel's order with one block (its torch spec
``channel_norm_reference``; on CUDA, ATen's order wherever ``kernel_norm_is_atens`` accepts the geometry and ATen
does not split the columns)."""

import pytest
import torch
from conftest import (
    DTYPES,
    HAS_CUDA,
    HAS_KERNELS,
    KERNEL_DEVICE,
    LAYOUTS,
    cuda,
    dup_cases,
    impl_params,
    main_shape,
    make_layout,
    random_tensor,
)
from hypothesis import example, given
from hypothesis import strategies as st
from diffusers.models.autoencoders.autoencoder_kl_wan import DupUp3D
from test_bias_add_contiguous import REAL_DUP_SHAPES, gradcheck_inputs
from test_bias_add_contiguous import epilogue_inputs as inputs

import torch_wanops
from torch_wanops.ops import bias_add_contiguous, bias_add_contiguous_norm
from torch_wanops.ops.bias_add_contiguous import bias_add_contiguous_reference
from torch_wanops.ops.rms_norm_cat_pad_5d import (
    _channel_norm,
    channel_norm_reference,
    chunk_ctas,
    kernel_norm_is_atens,
    launch_channel_norm,
)

# The device the Triton kernels run on here (CUDA, or the CPU under TRITON_INTERPRET=1), as a parameter: its id
# marks the CUDA case for ``-m cuda``.
kernel_device = pytest.mark.parametrize("device", [KERNEL_DEVICE] if HAS_KERNELS else [])


def assert_matches(args, kernel, **dup):
    """The op's tensor is bias_add_contiguous's spec; its norm is the kernel order's (``kernel``: the Triton path).
    ``dup``: DupUp3D factors, as bias_add_contiguous takes them."""
    x = args[0]
    if kernel:
        out, norm = bias_add_contiguous_norm(*args, **dup)
    else:
        with torch_wanops.reference_kernels():
            out, norm = bias_add_contiguous_norm(*args, **dup)
    expected = bias_add_contiguous_reference(*args, **dup)
    assert out.dtype == x.dtype and out.is_contiguous() and torch.equal(out, expected)
    assert norm.dtype == torch.float32 and norm.is_contiguous() and norm.shape == (x.shape[0], 1, *x.shape[2:])
    if kernel and x.dtype == torch.float32:
        # The spec squares fp32 in fp64 (it can round twice where an fma rounds once): the unsplit norm kernel's
        # order, which fp32 shares with 16-bit x, is the reference here.
        assert torch.equal(norm, launch_channel_norm(out, ctas=1))
    else:
        assert torch.equal(norm, channel_norm_reference(out))
    for source in args:
        if source is not None and out.numel():
            for result in (out, norm):
                assert result.untyped_storage().data_ptr() != source.untyped_storage().data_ptr()


@st.composite
def cases(draw):
    # Channel counts of each step width the kernel takes (64, 32, 16 channels a step) and any other.
    channels = draw(st.sampled_from([1, 5, 16, 32, 48, 64, 96, 128]) | st.integers(1, 140))
    shape = (draw(st.integers(1, 2)), channels, draw(st.integers(1, 3)), draw(st.integers(1, 4)),
             draw(st.integers(1, 40)))
    return (shape, draw(st.sampled_from(DTYPES)), draw(st.sampled_from(LAYOUTS)),
            draw(st.sampled_from((None, *LAYOUTS))), draw(st.booleans()), draw(st.integers(0, 2**16)))


@kernel_device
@given(case=cases())
@example(case=((2, 96, 3, 2, 37), torch.bfloat16, "channels_last", "contiguous", True, 1))
@example(case=((1, 130, 1, 3, 5), torch.float16, "permuted", "strided", False, 2))
@example(case=((2, 64, 2, 1, 33), torch.float32, "strided", None, False, 3))
def test_kernel_matches_its_spec(device, case):
    shape, dtype, layout, residual_layout, with_residual_bias, seed = case
    assert_matches(inputs(shape, dtype, device, layout, residual_layout, with_residual_bias, seed), True)


@impl_params()
@pytest.mark.parametrize("residual_layout", [None, "contiguous", "permuted"], ids=str)
def test_reference_path(device, impl, residual_layout):
    args = inputs((2, 24, 2, 3, 5), torch.bfloat16, device, "channels_last", residual_layout, True, 0)
    assert_matches(args, impl != "reference")


def dup_inputs(source_shape, out_channels, factor_t, factor_s, drop_first, dtype, device, x_layout, source_layout,
               seed):
    """Seeded (x, bias, source) and the DupUp3D keyword arguments of a Wan2.2 up block's shortcut; the spec is
    diffusers' module, checked here too."""
    module = DupUp3D(source_shape[1], out_channels, factor_t=factor_t, factor_s=factor_s)
    source = make_layout(random_tensor(source_shape, dtype, device, seed) * 8, source_layout)
    x = make_layout(random_tensor(main_shape(source_shape, out_channels, factor_t, factor_s, drop_first), dtype,
                                  device, seed + 1) * 8, x_layout)
    bias = random_tensor((out_channels,), dtype, device, seed + 2)
    dup = dict(dup_factor_t=factor_t, dup_factor_s=factor_s, dup_repeats=module.repeats, dup_drop_first=drop_first)
    stock = (x + bias.view(1, -1, 1, 1, 1)) + module(source, first_chunk=drop_first)
    assert torch.equal(bias_add_contiguous_reference(x, bias, source, None, *dup.values()), stock)
    return (x, bias, source), dup


@kernel_device
@given(case=dup_cases(), x_layout=st.sampled_from(LAYOUTS))
@example(case=(2, 8, 16, 2, 3, 5, 2, 2, True, torch.bfloat16, None, "channels_last", 0), x_layout="permuted")
@pytest.mark.slow
def test_dup_up3d_residual_matches_its_spec(device, case, x_layout):
    (batch, in_channels, out_channels, frames, height, width, factor_t, factor_s, drop_first, dtype, _,
     source_layout, seed) = case
    args, dup = dup_inputs((batch, in_channels, frames, height, width), out_channels, factor_t, factor_s,
                           drop_first, dtype, device, x_layout, source_layout, seed)
    assert_matches(args, True, **dup)


@impl_params()
def test_dup_up3d_reference_path(device, impl):
    args, dup = dup_inputs((1, 8, 2, 2, 3), 16, 2, 2, True, torch.bfloat16, device, "channels_last", "contiguous", 0)
    assert_matches(args, impl != "reference", **dup)


def test_norm_is_in_the_kernel_order_not_a_sequential_sum():
    # The 16-partial order differs from a plain sum on these values: a kernel adding in another order would fail.
    args = inputs((1, 96, 2, 8, 8), torch.bfloat16, "cpu", "channels_last", "contiguous", False, 4)
    with torch_wanops.reference_kernels():
        out, norm = bias_add_contiguous_norm(*args)
    assert not torch.equal(norm, torch.linalg.vector_norm(out.float(), dim=1, keepdim=True))


def test_no_channels_or_columns():
    for shape in ((1, 0, 2, 3, 4), (1, 8, 0, 3, 4)):
        x = torch.zeros(shape, dtype=torch.bfloat16)
        out, norm = bias_add_contiguous_norm(x, torch.zeros(shape[1], dtype=torch.bfloat16))
        assert out.shape == shape and norm.shape == (1, 1, *shape[2:]) and not norm.any()


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.slow
def test_opcheck(requires_grad):
    # Each x layout with one of the optional-argument forms: the outputs are contiguous whatever x's layout (the
    # full product took ~40 s of CI for the same checks).
    for device in ["cpu"] + (["cuda"] if HAS_CUDA else []):
        for layout, optional_args in zip(("contiguous", "channels_last", "permuted"), (0, 1, 2)):
            x = make_layout(torch.randn(2, 33, 2, 4, 5, device=device), layout).requires_grad_(requires_grad)
            bias = torch.randn(33, device=device).requires_grad_(requires_grad)
            residual = make_layout(torch.randn(2, 33, 2, 4, 5, device=device), "permuted").requires_grad_(requires_grad)
            residual_bias = torch.randn(33, device=device).requires_grad_(requires_grad)
            args = (x, bias, residual, residual_bias)[:2 + optional_args]
            torch.library.opcheck(torch.ops.wanops.bias_add_contiguous_norm.default, args)
        (x, bias, source), dup = dup_inputs((2, 6, 2, 2, 3), 6, 2, 2, True, torch.float32, device, "channels_last",
                                            "permuted", 1)
        args = (x.requires_grad_(requires_grad), bias.requires_grad_(requires_grad),
                source.requires_grad_(requires_grad), None, *dup.values())
        torch.library.opcheck(torch.ops.wanops.bias_add_contiguous_norm.default, args)


@pytest.mark.parametrize("residual_args", [0, 1, 2], ids=["bias", "residual", "residual-bias"])
def test_gradients(residual_args):
    """The tensor's gradient by gradcheck (fp64); the fp32 norm's is that of the norm of the same sum."""
    args = gradcheck_inputs(residual_args)
    assert torch.autograd.gradcheck(lambda *a: bias_add_contiguous_norm(*a)[0], args)
    grad_norm = torch.randn(2, 1, 2, 3, 4)
    got = torch.autograd.grad(bias_add_contiguous_norm(*args)[1], args, grad_norm)
    plain = torch.linalg.vector_norm(bias_add_contiguous_reference(*args).float(), dim=1, keepdim=True)
    expected = torch.autograd.grad(plain, args, grad_norm)
    assert all(torch.equal(g, e) for g, e in zip(got, expected)) and all(g.abs().sum() > 0 for g in got)


@pytest.mark.parametrize("drop_first", [False, True])
def test_dup_up3d_gradients(drop_first):
    """The source's gradient goes back through DupUp3D's index map, for the tensor and for the norm."""
    (x, bias, source), dup = dup_inputs((2, 6, 2, 2, 3), 3, 2, 2, drop_first, torch.float64, "cpu",
                                        "channels_last", "contiguous", 2)
    args = tuple(t.requires_grad_() for t in (x, bias, source))
    assert torch.autograd.gradcheck(lambda *a: bias_add_contiguous_norm(*a, **dup)[0], args)
    grad_norm = torch.randn(x.shape[0], 1, *x.shape[2:], dtype=torch.float32)
    got = torch.autograd.grad(bias_add_contiguous_norm(*args, **dup)[1], args, grad_norm)
    plain = torch.linalg.vector_norm(bias_add_contiguous_reference(*args, None, *dup.values()).float(), dim=1,
                                     keepdim=True)
    expected = torch.autograd.grad(plain, args, grad_norm)
    assert all(torch.equal(g, e) for g, e in zip(got, expected)) and all(g.abs().sum() > 0 for g in got)


def test_compile_fullgraph_matches_eager():
    args = inputs((1, 40, 2, 3, 6), torch.float32, "cpu", "channels_last", "contiguous", True, 5)
    compiled = torch.compile(bias_add_contiguous_norm, fullgraph=True, backend="inductor")
    for got, expected in zip(compiled(*args), bias_add_contiguous_norm(*args)):
        assert torch.equal(got, expected) and got.stride() == expected.stride()


X = torch.zeros(1, 4, 2, 3, 3)
INVALID = [
    (lambda: bias_add_contiguous_norm(X, torch.zeros(3)), ValueError, "bias"),
    (lambda: bias_add_contiguous_norm(X.half(), torch.zeros(4)), TypeError, "bias"),
    (lambda: bias_add_contiguous_norm(X, torch.zeros(4), torch.zeros(1, 4, 2, 3, 2)), ValueError, "residual"),
    (lambda: bias_add_contiguous_norm(X, torch.zeros(4), None, torch.zeros(4)), ValueError, "residual_bias"),
    (lambda: bias_add_contiguous_norm(X[0], torch.zeros(4)), ValueError, "x"),
    (lambda: bias_add_contiguous_norm(X, [0.0] * 4), TypeError, "bias"),
    (lambda: bias_add_contiguous_norm(X, torch.zeros(4), dup_factor_t=2), ValueError, "dup_factor_t"),
    (lambda: bias_add_contiguous_norm(X, torch.zeros(4), X, dup_repeats=2.0), TypeError, "dup_repeats"),
    (lambda: bias_add_contiguous_norm(X, torch.zeros(4), X, dup_factor_s=2, dup_repeats=4), ValueError,
     "residual"),
]


@pytest.mark.parametrize("call,error,message", INVALID, ids=[m + str(i) for i, (_, _, m) in enumerate(INVALID)])
def test_invalid_arguments_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


REAL_SHAPES = [(1, 256, 4, 240, 416), (1, 512, 4, 120, 208), (1, 96, 4, 480, 832), (1, 192, 4, 240, 416),
               (1, 384, 4, 120, 208), (2, 96, 1, 61, 77)]


@cuda
@pytest.mark.parametrize("residual_layout", [None, "contiguous", "contiguous-raw"], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_real_decoder_sizes_on_cuda(dtype, shape, residual_layout):
    """The decoder's conv2 epilogues: bias_add_contiguous's bits, the norm kernel's, and ATen's where the decoder
    takes the norm (kernel_norm_is_atens, one block)."""
    layout = None if residual_layout is None else "contiguous"
    args = inputs(shape, dtype, "cuda", "channels_last", layout, residual_layout == "contiguous-raw", 0)
    out, norm = bias_add_contiguous_norm(*args)
    assert torch.equal(out, bias_add_contiguous(*args))
    assert torch.equal(norm, launch_channel_norm(out, ctas=1))
    if chunk_ctas(out, 0) == 1 and kernel_norm_is_atens(out):
        assert torch.equal(norm, _channel_norm(out))


@cuda
@pytest.mark.parametrize("drop_first", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("source_shape,out_channels,factor_t", REAL_DUP_SHAPES, ids=str)
def test_real_dup_up3d_shortcuts_on_cuda(source_shape, out_channels, factor_t, dtype, drop_first):
    """Wan2.2's upsampler epilogues with their DupUp3D shortcuts (the conv output a frame-major view of
    channels-last frames): bias_add_contiguous's bits, the norm kernel's, and ATen's where the decoder takes it."""
    (x, bias, source), dup = dup_inputs((1, *source_shape), out_channels, factor_t, 2, drop_first, dtype, "cuda",
                                        "contiguous", "contiguous", 0)
    batch, channels, frames, height, width = x.shape
    x = x.permute(0, 2, 1, 3, 4).reshape(batch * frames, channels, height, width).contiguous(
        memory_format=torch.channels_last).view(batch, frames, channels, height, width).permute(0, 2, 1, 3, 4)
    out, norm = bias_add_contiguous_norm(x, bias, source, **dup)
    assert torch.equal(out, bias_add_contiguous(x, bias, source, **dup))
    assert torch.equal(norm, launch_channel_norm(out, ctas=1))
    if chunk_ctas(out, 0) == 1 and kernel_norm_is_atens(out):
        assert torch.equal(norm, _channel_norm(out))


COMPILE_FOR_SM90 = """
import itertools, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from torch_wanops.csrc_triton.bias_add_contiguous import bias_add_contiguous_kernel, bias_add_norm_kernel


def compile_for_sm90(kernel, constants):
    signature = {name: "constexpr" if name in constants else ("*fp32" if name == "norm_ptr" else "*bf16")
                 if name.endswith("_ptr") else "i32" for name in kernel.arg_names}
    triton.compile(ASTSource(kernel, signature, constants), target=GPUTarget("cuda", 90, 32),
                   options={"num_warps": 4})


residuals = ((False, False, (1, 1, 1)), (True, False, (1, 1, 1)), (True, True, (1, 1, 1)), (True, False, (1, 2, 4)),
             (True, False, (2, 2, 2)))
for groups, (residual, residual_bias, (factor_t, factor_s, repeats)), index64 in itertools.product(
        (1, 2, 4), residuals, (False, True)):
    compile_for_sm90(bias_add_norm_kernel, dict(
        HAS_RESIDUAL=residual, HAS_RESIDUAL_BIAS=residual_bias, FACTOR_T=factor_t, FACTOR_S=factor_s,
        REPEATS=repeats, INDEX64=index64, GROUPS=groups, BLOCK_W=32))
# bias_add_contiguous_kernel's time conv interleave (frame groups), which only it takes.
for frame_groups, index64 in itertools.product((2, 3), (False, True)):
    compile_for_sm90(bias_add_contiguous_kernel, dict(
        HAS_RESIDUAL=False, HAS_RESIDUAL_BIAS=False, FACTOR_T=1, FACTOR_S=1, REPEATS=1, FRAME_GROUPS=frame_groups,
        INDEX64=index64, BLOCK_C=128, BLOCK_W=128, LINES=1))
print("compiled")
"""


@pytest.mark.slow
def test_every_kernel_variant_compiles_for_sm90():
    """Triton's compiler, not the interpreter, on each constexpr variant of bias_add_norm_kernel and on
    bias_add_contiguous_kernel's frame-group ones (no GPU needed): the interpreter runs a kernel as Python, and once
    ran a branch the compiler rejects (session 42, two channel groups a step)."""
    import os
    import subprocess
    import sys

    pytest.importorskip("triton")
    env = {key: value for key, value in os.environ.items() if key != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, "-c", COMPILE_FOR_SM90], env=env, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0 and "compiled" in result.stdout, result.stderr[-3000:]
