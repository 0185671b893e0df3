"""wanops::bias_add_contiguous against ``(x + bias.view(1, C, 1, 1, 1) [+ (residual [+ residual_bias])]).contiguous()``,
and with DupUp3D factors against ``(x + bias.view(1, C, 1, 1, 1) + DupUp3D(residual)).contiguous()`` (diffusers'
module), bit for bit."""

import itertools

import pytest
import torch
from conftest import (
    DTYPES,
    HAS_CUDA,
    LAYOUTS,
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
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_wanops import _backend
from torch_wanops.ops import bias_add_contiguous


def assert_matches(x, bias, impl, residual=None, residual_bias=None):
    out = run_impl(impl, bias_add_contiguous, x, bias, residual, residual_bias)
    expected = x + bias.view(1, -1, 1, 1, 1)
    if residual_bias is not None:  # stock: the shortcut conv's own bias add_
        residual = residual + residual_bias.view(1, -1, 1, 1, 1)
    if residual is not None:  # stock: the conv's bias add_, then the block's x + shortcut
        expected = expected + residual
    assert out.dtype == x.dtype and out.device == x.device
    assert out.shape == expected.shape and out.is_contiguous()
    assert torch.equal(out, expected.contiguous())
    if out.numel():
        for source in (x, residual):
            assert source is None or out.untyped_storage().data_ptr() != source.untyped_storage().data_ptr()


@impl_params()
@given(
    shape=st.tuples(st.integers(1, 2), st.integers(1, 70), st.integers(1, 3), st.integers(1, 5), st.integers(1, 40)),
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(LAYOUTS),
    residual_layout=st.sampled_from((None, *LAYOUTS)),
    with_residual_bias=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_matches_add_then_contiguous(device, impl, shape, dtype, layout, residual_layout, with_residual_bias, seed):
    x, bias, residual, residual_bias = epilogue_inputs(shape, dtype, device, layout, residual_layout,
                                                       with_residual_bias, seed)
    assert_matches(x, bias, impl, residual, residual_bias)


def assert_matches_frame_groups(x, bias, groups, impl):
    """Stock's temporal upsampler: the time conv's bias add_, its 2C channels read as groups of C, group i's frame
    t put at frame G * t + i (its reshape, torch.stack along dim 3, reshape), here element by element."""
    out = run_impl(impl, bias_add_contiguous, x, bias, frame_groups=groups)
    biased = x + bias.view(1, -1, 1, 1, 1)
    batch, channels, frames, height, width = x.shape
    expected = torch.empty((batch, channels // groups, frames * groups, height, width), dtype=x.dtype)
    for i in range(groups):
        for t in range(frames):
            group = biased[:, i * (channels // groups):(i + 1) * (channels // groups), t]
            expected[:, :, groups * t + i] = group.cpu()
    assert out.dtype == x.dtype and out.shape == expected.shape and out.is_contiguous()
    assert torch.equal(out.cpu(), expected)
    assert out.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()


@impl_params()
@given(
    groups=st.sampled_from([1, 2, 3]),
    group_shape=st.tuples(st.integers(1, 2), st.integers(1, 24), st.integers(1, 3), st.integers(1, 4),
                          st.integers(1, 33)),
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_frame_groups_interleave_as_the_temporal_upsampler(device, impl, groups, group_shape, dtype, layout, seed):
    batch, channels, frames, height, width = group_shape
    x, bias, _, _ = epilogue_inputs((batch, channels * groups, frames, height, width), dtype, device, layout, None,
                                    False, seed)
    assert_matches_frame_groups(x, bias, groups, impl)


def epilogue_inputs(shape, dtype, device, layout, residual_layout, with_residual_bias, seed):
    """Seeded (x, bias, residual, residual_bias): x in ``layout``, a residual in ``residual_layout`` (None: none)."""
    x = make_layout(random_tensor(shape, dtype, device, seed) * 8, layout)
    bias = random_tensor((shape[1],), dtype, device, seed + 1)
    residual = residual_bias = None
    if residual_layout is not None:
        residual = make_layout(random_tensor(shape, dtype, device, seed + 2) * 8, residual_layout)
        if with_residual_bias:
            residual_bias = random_tensor((shape[1],), dtype, device, seed + 3)
    return x, bias, residual, residual_bias


def assert_matches_dup_up3d(x, bias, source, factor_t, factor_s, drop_first, impl):
    """Stock: the conv's bias add_, then a Wan2.2 up block's ``x + avg_shortcut(source, first_chunk)``."""
    module = DupUp3D(source.shape[1], x.shape[1], factor_t=factor_t, factor_s=factor_s)
    expected = (x + bias.view(1, -1, 1, 1, 1)) + module(source, first_chunk=drop_first)
    out = run_impl(impl, bias_add_contiguous, x, bias, source, dup_factor_t=factor_t, dup_factor_s=factor_s,
                   dup_repeats=module.repeats, dup_drop_first=drop_first)
    assert out.dtype == x.dtype and out.shape == expected.shape and out.is_contiguous()
    assert torch.equal(out, expected)
    for tensor in (x, source):
        assert out.untyped_storage().data_ptr() != tensor.untyped_storage().data_ptr()


@impl_params()
@given(case=dup_cases(), x_layout=st.sampled_from(LAYOUTS))
@pytest.mark.slow
def test_dup_up3d_residual_matches_the_stock_shortcut_add(device, impl, case, x_layout):
    (batch, in_channels, out_channels, frames, height, width, factor_t, factor_s, drop_first, dtype, _,
     source_layout, seed) = case
    source = make_layout(random_tensor((batch, in_channels, frames, height, width), dtype, device, seed) * 8,
                         source_layout)
    x = make_layout(random_tensor(main_shape(source.shape, out_channels, factor_t, factor_s, drop_first), dtype,
                                  device, seed + 1) * 8, x_layout)
    bias = random_tensor((out_channels,), dtype, device, seed + 2)
    assert_matches_dup_up3d(x, bias, source, factor_t, factor_s, drop_first, impl)


@impl_params()
def test_dup_up3d_residual_rounds_after_the_bias_add(device, impl):
    """Two roundings, as stock's conv bias add_ and then the up block's shortcut add."""
    x = torch.full((1, 1, 2, 2, 2), 1.0, dtype=torch.bfloat16, device=device)
    bias = torch.full((1,), 2.0**-8, dtype=torch.bfloat16, device=device)  # x + bias is a tie: rounds to 1.0
    source = torch.full((1, 8, 1, 1, 1), 2.0**-8, dtype=torch.bfloat16, device=device)
    out = run_impl(impl, bias_add_contiguous, x, bias, source, dup_factor_t=2, dup_factor_s=2, dup_repeats=1)
    assert torch.equal(out, torch.ones_like(x))  # one fp32 sum of the three would give 1 + 2**-7
    assert_matches_dup_up3d(x, bias, source, 2, 2, False, impl)


@pytest.mark.skipif(not (_backend.INTERPRETER and _backend.kernel_module("bias_add_contiguous")),
                    reason="needs TRITON_INTERPRET=1")
@pytest.mark.parametrize("lines,grid_yz_limit", [(1, _backend.GRID_YZ_LIMIT), (1, 0), (4, _backend.GRID_YZ_LIMIT)],
                         ids=["one-line-3d-grid", "one-line-flat-grid", "four-lines"])
@settings(max_examples=8)
@given(case=dup_cases(), residual_layout=st.sampled_from((None, *LAYOUTS)), with_residual_bias=st.booleans(),
       groups=st.sampled_from([2, 3]))
def test_lines_per_program_under_interpreter(lines, grid_yz_limit, case, residual_layout, with_residual_bias, groups):
    """The GPU's launch (one line per program, LINES=1) through the interpreter, which otherwise packs all of a
    call's lines into one program, on the 3-D grid and on the flat one that lines or width blocks past CUDA's y and
    z limits take; and programs of 4 lines, lines of another frame or batch in one program, the last program partly
    past the end. Each with a DupUp3D source, a plain or no residual, and frame groups."""
    (batch, in_channels, out_channels, frames, height, width, factor_t, factor_s, drop_first, dtype, x_layout,
     source_layout, seed) = case
    source = make_layout(random_tensor((batch, in_channels, frames, height, width), dtype, "cpu", seed) * 8,
                         source_layout)
    shape = main_shape(source.shape, out_channels, factor_t, factor_s, drop_first)
    x, bias, residual, residual_bias = epilogue_inputs(shape, dtype, "cpu", x_layout, residual_layout,
                                                       with_residual_bias, seed + 1)
    grouped, grouped_bias, _, _ = epilogue_inputs((shape[0], shape[1] * groups, *shape[2:]), dtype, "cpu", x_layout,
                                                  None, False, seed + 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_backend, "lines_per_program", lambda tile_elements, call_lines: lines)
        patch.setattr(_backend, "GRID_YZ_LIMIT", grid_yz_limit)
        assert_matches_dup_up3d(x, bias, source, factor_t, factor_s, drop_first, "triton")
        assert_matches(x, bias, "triton", residual, residual_bias)
        assert_matches_frame_groups(grouped, grouped_bias, groups, "triton")


@impl_params()
@pytest.mark.parametrize("cropped", ["x", "residual"])
def test_width_cropped_views(device, impl, cropped):
    """A view cropped in width: its rows are not back to back."""
    shape = (2, 5, 3, 4, 7)
    full = random_tensor((*shape[:4], shape[4] + 3), torch.float16, device, 3).contiguous(
        memory_format=torch.channels_last_3d)
    other = make_layout(random_tensor(shape, torch.float16, device, 4), "channels_last")
    x, residual = (full[..., 1:-2], other) if cropped == "x" else (other, full[..., 1:-2])
    assert_matches(x, random_tensor((shape[1],), torch.float16, device, 5), impl, residual)


@impl_params()
def test_residual_rounds_after_the_bias_add(device, impl):
    """Two roundings, as stock's two adds: one fp32 sum of all three would round differently here."""
    x = torch.full((1, 1, 1, 1, 4), 1.0, dtype=torch.bfloat16, device=device)
    bias = torch.full((1,), 2.0**-8, dtype=torch.bfloat16, device=device)  # x + bias is a tie: rounds to 1.0
    residual = torch.full((1, 1, 1, 1, 4), 2.0**-8, dtype=torch.bfloat16, device=device)
    out = run_impl(impl, bias_add_contiguous, x, bias, residual)
    assert torch.equal(out, torch.ones_like(x))  # (1 + 2**-8) + 2**-8 in one fp32 sum would give 1 + 2**-7
    assert_matches(x, bias, impl, residual)


@impl_params()
def test_residual_bias_rounds_on_its_own(device, impl):
    """The shortcut's bias add rounds before the shortcut is added, as stock's add_ on the shortcut conv's output."""
    x = torch.full((1, 1, 1, 1, 4), 2.0**-8, dtype=torch.bfloat16, device=device)
    bias = torch.zeros((1,), dtype=torch.bfloat16, device=device)
    residual = torch.ones((1, 1, 1, 1, 4), dtype=torch.bfloat16, device=device)
    residual_bias = torch.full((1,), 2.0**-8, dtype=torch.bfloat16, device=device)  # 1 + 2**-8 is a tie: 1.0
    out = run_impl(impl, bias_add_contiguous, x, bias, residual, residual_bias)
    assert torch.equal(out, torch.ones_like(x))  # 2**-8 + (1 + 2**-8) unrounded would give 1 + 2**-7
    assert_matches(x, bias, impl, residual, residual_bias)


@impl_params()
def test_float64_takes_reference(device, impl):
    x = torch.randn(1, 3, 2, 2, 5, dtype=torch.float64, device=device).contiguous(memory_format=torch.channels_last_3d)
    assert_matches(x, torch.randn(3, dtype=torch.float64, device=device), impl)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_opcheck(requires_grad):
    # Every argument form in every x layout took ~30 s of CI: each form runs in one layout, the layouts in turn (the
    # output is contiguous whatever x's layout).
    op = torch.ops.wanops.bias_add_contiguous.default
    layouts = itertools.cycle(("contiguous", "channels_last", "permuted"))
    for device in ["cpu"] + (["cuda"] if HAS_CUDA else []):
        def tensor(*shape, layout="contiguous"):
            return make_layout(torch.randn(*shape, device=device), layout).requires_grad_(requires_grad)

        residual = tensor(2, 3, 2, 4, 5, layout="permuted")
        for optional in ((), (residual,), (residual, tensor(3))):
            torch.library.opcheck(op, (tensor(2, 3, 2, 4, 5, layout=next(layouts)), tensor(3), *optional))
        for groups in (2, 3):
            torch.library.opcheck(op, (tensor(2, 6, 2, 4, 5, layout=next(layouts)), tensor(6), None, None, 1, 1, 1,
                                       False, groups))
        for drop_first in (False, True):  # a DupUp3D source: x is its (2, 3, 2 - drop_first, 4, 5) output
            layout = next(layouts)
            x = tensor(2, 3, 2, 4, 5, layout=layout)[:, :, drop_first:]
            torch.library.opcheck(op, (x, tensor(3), tensor(2, 6, 1, 4, 5, layout=layout), None, 2, 1, 1, drop_first))


def gradcheck_inputs(residual_args: int) -> tuple[torch.Tensor, ...]:
    """fp64 (x, bias) and the first ``residual_args`` of (residual, residual_bias), all requiring grad."""
    x = torch.randn(2, 3, 2, 3, 4, dtype=torch.float64).contiguous(memory_format=torch.channels_last_3d)
    optional = (torch.randn(2, 3, 2, 3, 4, dtype=torch.float64), torch.randn(3, dtype=torch.float64))
    return tuple(t.requires_grad_() for t in (x, torch.randn(3, dtype=torch.float64), *optional[:residual_args]))


@pytest.mark.parametrize("residual_args", [0, 1, 2], ids=["bias", "residual", "residual-bias"])
def test_gradcheck(residual_args):
    assert torch.autograd.gradcheck(bias_add_contiguous, gradcheck_inputs(residual_args))


@pytest.mark.parametrize("groups", [2, 3])
def test_gradcheck_frame_groups(groups):
    x = torch.randn(2, 2 * groups, 3, 2, 3, dtype=torch.float64).contiguous(memory_format=torch.channels_last_3d)
    bias = torch.randn(2 * groups, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda x, b: bias_add_contiguous(x, b, frame_groups=groups),
                                    (x.requires_grad_(), bias.requires_grad_()))


@pytest.mark.parametrize("drop_first", [False, True])
def test_gradcheck_dup_up3d_residual(drop_first):
    x = torch.randn(2, 3, 4 - drop_first, 4, 6, dtype=torch.float64).contiguous(memory_format=torch.channels_last_3d)
    bias, source = torch.randn(3, dtype=torch.float64), torch.randn(2, 6, 2, 2, 3, dtype=torch.float64)

    def shortcut_add(x, bias, source):
        return bias_add_contiguous(x, bias, source, dup_factor_t=2, dup_factor_s=2, dup_repeats=4,
                                   dup_drop_first=drop_first)

    assert torch.autograd.gradcheck(shortcut_add, (x.requires_grad_(), bias.requires_grad_(), source.requires_grad_()))


@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(dynamic):
    torch._dynamo.reset()

    def epilogue(x, bias, shortcut, source):
        total = bias_add_contiguous(x * 2, bias) + bias_add_contiguous(x, bias, shortcut) + bias_add_contiguous(
            x, bias, shortcut, bias * 3) + bias_add_contiguous(x, bias, source, dup_factor_t=2, dup_repeats=2)
        return total, bias_add_contiguous(x, bias, frame_groups=3) * 2

    compiled = torch.compile(epilogue, fullgraph=True, dynamic=dynamic, backend="inductor")
    for width in (5, 7):
        x = torch.randn(1, 3, 2, 4, width).contiguous(memory_format=torch.channels_last_3d)
        bias = torch.randn(3)
        shortcut = make_layout(torch.randn(1, 3, 2, 4, width), "permuted")
        source = torch.randn(1, 3, 1, 4, width)
        for got, expected in zip(compiled(x, bias, shortcut, source), epilogue(x, bias, shortcut, source)):
            assert torch.equal(got, expected) and got.stride() == expected.stride()


INVALID = [
    (lambda x, b: bias_add_contiguous(x[0], b), ValueError, "x must be a 5-D"),
    (lambda x, b: bias_add_contiguous("x", b), TypeError, "x must be a torch.Tensor"),
    (lambda x, b: bias_add_contiguous(x, b.view(1, 3)), ValueError, "bias must be a 1-D"),
    (lambda x, b: bias_add_contiguous(x, b[:2]), ValueError, "bias must have one entry per channel"),
    (lambda x, b: bias_add_contiguous(x, b.double()), TypeError, "bias must have the dtype of x"),
    (lambda x, b: bias_add_contiguous(x, b, "r"), TypeError, "residual must be a torch.Tensor or None"),
    (lambda x, b: bias_add_contiguous(x, b, x[0]), ValueError, "residual must be a 5-D"),
    (lambda x, b: bias_add_contiguous(x, b, x[:, :2]), ValueError, "residual must have the shape of x"),
    (lambda x, b: bias_add_contiguous(x, b, x.half()), TypeError, "residual must have the dtype of x"),
    (lambda x, b: bias_add_contiguous(x, b, None, b), ValueError, "residual_bias needs a residual"),
    (lambda x, b: bias_add_contiguous(x, b, x, "b"), TypeError, "residual_bias must be a torch.Tensor or None"),
    (lambda x, b: bias_add_contiguous(x, b, x, b.view(1, 3)), ValueError, "residual_bias must be a 1-D"),
    (lambda x, b: bias_add_contiguous(x, b, x, b[:2]), ValueError, "residual_bias must have one entry per channel"),
    (lambda x, b: bias_add_contiguous(x, b, x, b.double()), TypeError, "residual_bias must have the dtype of x"),
    (lambda x, b: bias_add_contiguous(x, b, dup_factor_t=2), ValueError, "pass its DupUp3D source"),
    (lambda x, b: bias_add_contiguous(x, b, x, b, dup_repeats=2), ValueError, "residual_bias cannot be combined"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_factor_t=2.0), TypeError, "dup_factor_t must be an int"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_factor_s="2"), TypeError, "dup_factor_s must be an int"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_repeats=None), TypeError, "dup_repeats must be an int"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_drop_first=1), TypeError, "dup_drop_first must be a bool"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_factor_t=3), ValueError, "dup_factor_t must be a positive power"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_factor_s=0), ValueError, "dup_factor_s must be a positive power"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_repeats=-2), ValueError, "dup_repeats must be positive"),
    (lambda x, b: bias_add_contiguous(x, b, x[:, :1], dup_factor_s=2, dup_repeats=2), ValueError,
     "dup_repeats=2 is inconsistent with residual's 1 channels"),
    (lambda x, b: bias_add_contiguous(x, b, x, dup_factor_t=2, dup_repeats=2), ValueError,
     r"x must have shape \(2, 3, 2, 4, 5\) for this residual"),
    (lambda x, b: bias_add_contiguous(x, b, x[0], dup_repeats=2), ValueError, "residual must be a 5-D"),
    (lambda x, b: bias_add_contiguous(x, b, frame_groups=2.0), TypeError, "frame_groups must be an int"),
    (lambda x, b: bias_add_contiguous(x, b, frame_groups=0), ValueError, "frame_groups must be positive"),
    (lambda x, b: bias_add_contiguous(x, b, frame_groups=2), ValueError, "frame_groups=2 must divide x's 3 channels"),
    (lambda x, b: bias_add_contiguous(x, b, x, frame_groups=3), ValueError,
     "frame_groups cannot be combined with a residual"),
]


@pytest.mark.parametrize("call,error,message", INVALID, ids=[m for _, _, m in INVALID])
def test_invalid_arguments_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call(torch.randn(2, 3, 1, 4, 5), torch.randn(3))


# Conv outputs of the decoder: (channels, frames, height, width).
REAL_SHAPES = [(96, 4, 480, 832), (192, 4, 240, 416), (384, 2, 120, 208), (384, 1, 60, 104), (1024, 1, 30, 52),
               (3, 4, 480, 832), (12, 4, 240, 416)]


@cuda
@pytest.mark.parametrize("residual_layout", [None, "contiguous", "permuted", "contiguous-raw"], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_real_decoder_sizes_on_cuda(dtype, shape, residual_layout):
    """Conv outputs with their bias, and with a residual block's shortcut: contiguous, or frame-major, or a
    shortcut conv's raw output with that conv's bias."""
    x = random_tensor((1, *shape), dtype, "cuda", 0).contiguous(memory_format=torch.channels_last_3d)
    residual = residual_bias = None
    if residual_layout is not None:
        layout, _, raw = residual_layout.partition("-")
        residual = make_layout(random_tensor((1, *shape), dtype, "cuda", 2), layout)
        residual_bias = random_tensor((shape[0],), dtype, "cuda", 3) if raw else None
    assert_matches(x, random_tensor((shape[0],), dtype, "cuda", 1), "triton", residual, residual_bias)


# Wan2.2's DupUp3D shortcuts added by the upsampler's Conv2d epilogue: (source channels, frames, height,
# width), out channels, factor_t; factor_s 2. The conv's output is a frame-major view of channels-last frames.
REAL_DUP_SHAPES = [((1024, 2, 120, 208), 512, 1), ((1024, 2, 60, 104), 1024, 2), ((1024, 5, 30, 52), 1024, 2),
                   ((1024, 1, 30, 52), 1024, 2)]


@cuda
@pytest.mark.parametrize("drop_first", [False, True])
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("source_shape,out_channels,factor_t", REAL_DUP_SHAPES, ids=str)
def test_real_dup_up3d_shortcuts_on_cuda(source_shape, out_channels, factor_t, dtype, drop_first):
    source = random_tensor((1, *source_shape), dtype, "cuda", 0)
    batch, _, frames, height, width = main_shape(source.shape, out_channels, factor_t, 2, drop_first)
    conv_output = random_tensor((batch * frames, out_channels, height, width), dtype, "cuda", 1)
    x = conv_output.contiguous(memory_format=torch.channels_last).view(batch, frames, out_channels, height, width)
    bias = random_tensor((out_channels,), dtype, "cuda", 2)
    assert_matches_dup_up3d(x.permute(0, 2, 1, 3, 4), bias, source, factor_t, 2, drop_first, "triton")


# Temporal upsamplers' time conv outputs (2C channels, frames, height, width): Wan2.2's in the batched latent stage
# and after it, Wan2.1's.
REAL_TIME_CONV_SHAPES = [(2048, 5, 30, 52), (2048, 2, 60, 104), (768, 2, 60, 104), (768, 2, 120, 208)]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", REAL_TIME_CONV_SHAPES, ids=str)
def test_real_time_conv_interleaves_on_cuda(dtype, shape):
    x = random_tensor((1, *shape), dtype, "cuda", 0).contiguous(memory_format=torch.channels_last_3d)
    assert_matches_frame_groups(x, random_tensor((shape[0],), dtype, "cuda", 1), 2, "triton")


@cuda
def test_a_line_of_many_width_blocks():
    # One line of 2**21 + 1 columns: thousands of width blocks in the flat grid.
    x = random_tensor((1, 3, 1, 1, 2**21 + 1), torch.bfloat16, "cuda", 0)
    assert_matches(x, random_tensor((3,), torch.bfloat16, "cuda", 1), "triton")


@cuda
def test_int64_indexing_beyond_2_pow_31_elements():
    skip_unless_free_gpu_memory(20)
    x = torch.randn(1, 96, 4, 2048, 2800, device="cuda", dtype=torch.bfloat16)
    x = x.contiguous(memory_format=torch.channels_last_3d)
    bias = torch.randn(96, device="cuda", dtype=torch.bfloat16)
    assert x.numel() > 2**31
    out = bias_add_contiguous(x, bias)
    assert out.is_contiguous()
    # Check the far end (offsets past 2**31) and the start against the plain add.
    column = bias.view(1, -1, 1, 1, 1)
    assert torch.equal(out[:, :, -1:, -5:, -7:], x[:, :, -1:, -5:, -7:] + column)
    assert torch.equal(out[:, :, :1, :5, :7], x[:, :, :1, :5, :7] + column)
