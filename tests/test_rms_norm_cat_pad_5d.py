"""wanops::rms_norm_cat_pad_5d against diffusers' WanRMS_norm + SiLU + cat + pad, bit for bit.

On CUDA the op runs its Triton kernel and is compared with the stock modules.
Under TRITON_INTERPRET=1 the op keeps its reference on CPU (the interpreter's exp
is numpy's), so the kernel is driven directly and compared with an emulation of
ATen's CUDA arithmetic built from the same numpy exp.
"""

import importlib

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from conftest import (
    DTYPES,
    HAS_CUDA,
    LAYOUTS,
    IMPLEMENTATIONS,
    cuda,
    exact_strides_graphs,
    make_layout,
    random_tensor,
    run_impl,
    skip_unless_free_gpu_memory,
)
from diffusers.models.autoencoders.autoencoder_kl_wan import WanRMS_norm
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from test_cat_pad_5d import (
    REAL_SHAPES,
    assert_compiled_conv_input_matches,
    build_case,
    cat_pad_cases,
    expected_outputs,
)

from torch_wanops import _backend
from torch_wanops.ops import rms_norm_cat_pad_5d
from torch_wanops.ops._common import rounded_to_tf32
from torch_wanops.ops.cat_pad_5d import NormPrologue, launch_cat_pad_5d
from torch_wanops.ops.rms_norm_cat_pad_5d import (
    _channel_norm,
    _out_strides,
    aten_ctas_per_output,
    channel_norm_reference,
    frame_chunks,
    kernel_norm_is_atens,
    launch_channel_norm,
    norm_probe_count,
    rms_norm_silu_reference,
    silu_table,
)

rms_module = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")  # the package re-exports the op

# The op's own dispatch never takes the interpreter (see the module docstring).
OP_IMPLEMENTATIONS = [(d, i) for d, i in IMPLEMENTATIONS if not (d == "cpu" and i == "triton")]
op_impl_params = pytest.mark.parametrize(
    "device,impl", OP_IMPLEMENTATIONS, ids=[f"{d}-{i}" for d, i in OP_IMPLEMENTATIONS]
)


def stock_norm(channels, dtype, device, seed):
    norm = WanRMS_norm(channels, images=False).to(device=device, dtype=dtype)
    with torch.no_grad():
        norm.gamma.copy_(random_tensor(norm.gamma.shape, dtype, device, seed))
    return norm


def addressing_strides(tensor):
    """The strides that address memory: those of dims longer than 1."""
    return [s for s, n in zip(tensor.stride(), tensor.shape) if n > 1]


def assert_layout(tensor, memory_format):
    """``tensor`` is dense in ``memory_format``."""
    if tensor.numel():
        expected = torch.empty(tensor.shape, device="meta", memory_format=memory_format)
        assert addressing_strides(tensor) == addressing_strides(expected)


def check_outputs(out, next_cache, normalized, x, cache, padding, keep, channels_last, stock_layout=True,
                  tf32_out=False):
    """Values of ``normalized`` padded; the op's layout rule, and with ``stock_layout`` (``normalized``
    came from the stock modules) the stock layout for same-layout dense inputs. With ``tf32_out`` the
    padded output (cached frames included) rounded to TF32 for fp32, the next cache not."""
    ref_out, ref_kept = expected_outputs(normalized, cache, padding, keep)
    if tf32_out and ref_out.dtype == torch.float32:
        ref_out = rounded_to_tf32(ref_out)
    assert out.shape == ref_out.shape and out.dtype == x.dtype and out.device == x.device
    inputs = [x] + ([] if cache is None else [cache])
    both_channels_last = all(t.shape[1] > 1 and t.stride(1) == 1 for t in inputs)
    memory_format = torch.channels_last_3d if channels_last or both_channels_last else torch.contiguous_format
    assert_layout(out, memory_format)
    assert_layout(next_cache, memory_format)
    if stock_layout and not channels_last and (
        all(t.is_contiguous() and not (t.shape[1] > 1 and t.stride(1) == 1) for t in inputs)
        # Exactly channels_last_3d's strides, as the decoder requires (_dense_layout): with size-1
        # dims a tensor can pass is_contiguous(channels_last_3d) while ATen lays stock's output out NCDHW.
        or all(t.stride() == torch.empty(t.shape, device="meta", memory_format=torch.channels_last_3d).stride()
               and not t.is_contiguous() for t in inputs)
    ):
        assert addressing_strides(out) == addressing_strides(ref_out)
    # The values, bit for bit (2a4ff52 to 8e542fa lost these two lines: only layouts were checked).
    assert torch.equal(out, ref_out)
    assert next_cache.shape == ref_kept.shape and torch.equal(next_cache, ref_kept)
    # Functional: fresh storage, never a view of an input.
    for result in (out, next_cache):
        for source in inputs:
            if result.numel() and source.numel():
                assert result.untyped_storage().data_ptr() != source.untyped_storage().data_ptr()


@st.composite
def norm_cases(draw):
    return draw(cat_pad_cases()), draw(st.booleans()), draw(st.booleans()), draw(st.floats(0.1, 40.0))


@op_impl_params
@given(case=norm_cases())
@example(case=((1, 2, 1, 1, 1, 0, 0, 0, None, 0, torch.bfloat16, "contiguous", "contiguous", 0), True, False, 2.0))
@example(case=((2, 3, 2, 2, 5, 1, 1, 2, 1, 2, torch.float32, "channels_last", "cropped", 3), True, True, 1.7))
@example(case=((1, 2, 2, 1, 1, 0, 0, 1, None, 0, torch.float16, "permuted", "contiguous", 0), False, False, 1.0))
def test_matches_stock_norm_silu_cat_pad(device, impl, case):
    cat_case, silu, channels_last, scale = case
    x, cache, padding, keep = build_case(cat_case, device)
    # Inputs three times the unit scale reach SiLU's tails and the norm's rounding edges.
    x = x * 3
    norm = stock_norm(x.shape[1], x.dtype, device, cat_case[-1] + 7)
    norm.scale = scale
    with torch.no_grad():
        normalized = norm(x)
        if silu:
            normalized = nn.SiLU()(normalized)
        out, next_cache = run_impl(
            impl, rms_norm_cat_pad_5d, x, norm.gamma, norm.scale, silu, cache, padding, keep, channels_last
        )
    check_outputs(out, next_cache, normalized, x, cache, padding, keep, channels_last)


def emulated_cuda_rms_norm_silu(x, gamma, scale, silu, norm):
    """ATen's CUDA arithmetic on CPU, with numpy's exp (the interpreter's) standing in for expf."""

    def rounded(value):
        return value.to(x.dtype).float()

    y = rounded(x.float() / norm.clamp_min(1e-12))
    y = rounded(y * torch.tensor(scale, dtype=torch.float32))
    y = rounded(y * gamma.float())
    y = rounded(y + 0.0)
    if silu:
        values = y.numpy()
        y = rounded(torch.from_numpy(values / (np.float32(1) + np.exp(-values))))
    return y.to(x.dtype)


def looked_up(table, values):
    return table[values.contiguous().view(torch.int16).to(torch.int64) & 0xFFFF]


def stock_conv_output(raw, bias):
    """Stock's conv output for a raw one: NCDHW, the bias added in place (rounded once)."""
    return raw.contiguous() + bias.view(1, -1, 1, 1, 1)


def check_kernel_against_emulation(case, by_table, with_bias=False, tf32_out=False):
    """Drive the kernel directly; SiLU computed, or (``by_table``) looked up in silu_table(); with
    ``with_bias`` x is a raw conv output whose bias the kernel adds (norm from channel_norm_kernel);
    with ``tf32_out`` the padded output rounded to TF32 (fp32)."""
    cat_case, silu, channels_last, scale = case
    x, cache, padding, keep = build_case(cat_case, "cpu")
    x = x * 3
    gamma = random_tensor((x.shape[1], 1, 1, 1), x.dtype, "cpu", cat_case[-1] + 7)
    bias = random_tensor((x.shape[1],), x.dtype, "cpu", cat_case[-1] + 11) if with_bias else None
    norm = _channel_norm(x) if bias is None else launch_channel_norm(x, bias)
    table = silu_table("cpu", x.dtype) if by_table else None
    prologue = NormPrologue(norm, gamma, scale, silu or by_table, table, bias, tf32_out)
    strides = _out_strides(x, cache, padding, channels_last)
    out, next_cache = launch_cat_pad_5d(x, cache, padding, keep, strides, prologue)
    biased = x if bias is None else stock_conv_output(x, bias)
    normalized = emulated_cuda_rms_norm_silu(biased, gamma, scale, silu and not by_table, norm)
    if by_table:
        normalized = looked_up(table, normalized)
    # The emulation's own layout says nothing about stock's.
    check_outputs(out, next_cache, normalized, x, cache, padding, keep, channels_last, stock_layout=False,
                  tf32_out=tf32_out)


needs_interpreter = pytest.mark.skipif(
    not (_backend.INTERPRETER and _backend.kernel_module("cat_pad_5d")), reason="needs TRITON_INTERPRET=1"
)


@needs_interpreter
@given(case=norm_cases())
@example(case=((1, 3, 1, 2, 3, 1, 1, 2, 2, 2, torch.bfloat16, "contiguous", "cropped", 1), True, False, 2.0))
def test_kernel_under_interpreter_matches_cuda_arithmetic(case):
    check_kernel_against_emulation(case, by_table=False)


@needs_interpreter
@settings(max_examples=8)
@given(case=norm_cases())
@example(case=((1, 3, 1, 2, 3, 1, 1, 2, 2, 2, torch.bfloat16, "contiguous", "cropped", 1), True, False, 2.0))
@example(case=((2, 5, 2, 2, 32, 1, 1, 2, 2, 2, torch.bfloat16, "contiguous", "cropped", 1), True, True, 2.0))
@example(case=((1, 4, 1, 2, 16, 1, 1, 2, 1, 2, torch.float16, "permuted", "contiguous", 3), True, True, 1.5))
def test_kernel_one_line_per_program_under_interpreter(case):
    """The GPU's launch (LINES=1) of the norm prologue, through the interpreter: lines of cached
    frames and of the zero border skip the norm's arithmetic there."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_backend, "lines_per_program", lambda tile_elements, lines: 1)
        check_kernel_against_emulation(case, by_table=False)


@needs_interpreter
@given(case=norm_cases())
@example(case=((1, 3, 1, 2, 3, 1, 1, 2, 2, 2, torch.bfloat16, "contiguous", "cropped", 1), True, False, 2.0))
@example(case=((2, 5, 2, 2, 32, 1, 1, 2, 2, 2, torch.bfloat16, "contiguous", "cropped", 1), True, True, 2.0))
def test_silu_table_kernel_under_interpreter(case):
    """The kernel's table SiLU: the emulated norm, then the table entry of its bits."""
    assume(case[0][10] != torch.float32)
    check_kernel_against_emulation(case, by_table=True)


@needs_interpreter
@given(case=norm_cases())
@example(case=((2, 5, 2, 2, 3, 1, 1, 2, 2, 2, torch.bfloat16, "channels_last", "cropped", 1), True, True, 2.0))
def test_bias_prologue_under_interpreter_matches_cuda_arithmetic(case):
    """A raw conv output: the kernel adds the bias (rounded to x's dtype) before the norm."""
    check_kernel_against_emulation(case, by_table=False, with_bias=True)


@needs_interpreter
@given(case=norm_cases(), with_bias=st.booleans())
@example(case=((2, 5, 2, 2, 3, 1, 1, 2, 2, 2, torch.float32, "channels_last", "cropped", 1), True, True, 2.0),
         with_bias=True)
def test_tf32_out_under_interpreter_rounds_only_the_conv_input(case, with_bias):
    """tf32_out: the padded output, cached frames too, rounded to TF32 (ties to even); the next cache as stock's."""
    check_kernel_against_emulation(case, by_table=False, with_bias=with_bias, tf32_out=True)


@st.composite
def channel_norm_cases(draw):
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 80)), draw(st.integers(1, 3)), draw(st.integers(1, 4)),
             draw(st.integers(1, 5)))
    # ATen's block split: none (1), and counts it takes at 1024 channels on an H200 (3, 5, 16), or any other
    ctas = draw(st.sampled_from([1, 1, 2, 3, 5, 16]))
    return shape, draw(st.sampled_from([torch.bfloat16, torch.float16])), draw(st.sampled_from(LAYOUTS)), \
        draw(st.booleans()), ctas, draw(st.integers(0, 2**16))


@needs_interpreter
@given(case=channel_norm_cases())
@example(case=((2, 33, 2, 3, 4), torch.bfloat16, "channels_last", True, 1, 5))
@example(case=((1, 80, 2, 3, 4), torch.bfloat16, "contiguous", False, 5, 6))
@example(case=((2, 70, 1, 2, 3), torch.float16, "channels_last", True, 16, 7))
def test_channel_norm_kernel_adds_in_its_order_under_interpreter(case):
    """channel_norm_kernel against its torch spec (16 partial sums per block over ``ctas`` blocks, ATen's CUDA
    order), in any layout, with and without a bias; fp32 is left to the GPU (the spec's fp64 fma can round twice)."""
    shape, dtype, layout, with_bias, ctas, seed = case
    x = make_layout(random_tensor(shape, dtype, "cpu", seed) * 3, layout)
    bias = random_tensor((shape[1],), dtype, "cpu", seed + 1) if with_bias else None
    got = launch_channel_norm(x, bias, ctas=ctas)
    assert got.shape == (shape[0], 1, *shape[2:]) and got.dtype == torch.float32 and got.is_contiguous()
    assert torch.equal(got, channel_norm_reference(x, bias, ctas))


def test_channel_norm_spec_is_not_a_sequential_sum():
    # The 16-partial order is not how the CPU adds, and the block split is another order again:
    # the spec would be vacuous if they agreed.
    x = random_tensor((1, 96, 2, 8, 8), torch.bfloat16, "cpu", 0) * 3
    sequential = torch.linalg.vector_norm(x.float(), dim=1, keepdim=True)
    unsplit = channel_norm_reference(x)
    assert not torch.equal(unsplit, sequential)
    wide = random_tensor((1, 1024, 1, 8, 8), torch.bfloat16, "cpu", 1) * 3
    assert not torch.equal(channel_norm_reference(wide, ctas=16), channel_norm_reference(wide))
    assert not torch.equal(channel_norm_reference(wide, ctas=16), channel_norm_reference(wide, ctas=5))


@pytest.mark.parametrize("channels, columns, ctas", [
    # Measured on an H200 (132 SMs, 2048 threads each; gpu-logs/session33/E): the count that gives ATen's bits
    (1024, 1560, 16), (1024, 7800, 16), (1024, 12480, 16), (1024, 62400, 5), (1024, 99840, 3),
    # no split: under 256 channels per thread, or more columns than resident blocks hold
    (512, 12480, 1), (384, 99840, 1), (96, 1597440, 1), (1024, 4 * 128 * 2112 + 4 * 128, 1),
])
def test_aten_ctas_per_output_at_measured_shapes(channels, columns, ctas):
    assert aten_ctas_per_output(channels, columns, 132, 2048) == ctas


@pytest.mark.parametrize("shape, probes", [([1, 3, 1, 1, 2], 256), ([1, 1024, 1, 30, 52], 3), ([2, 96, 4, 16, 64], 1),
                                           ([1, 8, 0, 4, 4], 1)], ids=str)
def test_few_columns_are_judged_on_several_probes(shape, probes):
    assert norm_probe_count(shape) == probes


def test_kernel_norm_is_not_taken_off_cuda():
    assert not kernel_norm_is_atens(torch.zeros(1, 4, 1, 2, 2, dtype=torch.bfloat16))


@op_impl_params
@given(case=norm_cases(), bias_seed=st.integers(0, 2**16))
@example(case=((2, 3, 2, 2, 5, 1, 1, 2, 1, 2, torch.bfloat16, "channels_last", "cropped", 3), True, True, 1.7),
         bias_seed=0)
# Found on the H200 (session 38): 2 columns of 3 fp32 channels, which one random probe had judged in ATen's order.
@example(case=((1, 3, 1, 1, 2, 0, 0, 0, None, 0, torch.float32, "contiguous", "contiguous", 0, False), False, False,
               1.0), bias_seed=0)
def test_bias_is_added_as_stock_conv_adds_it(device, impl, case, bias_seed):
    """``bias``: x is a raw conv output; the op normalizes stock's conv output (x + bias, NCDHW)."""
    cat_case, silu, channels_last, scale = case
    x, cache, padding, keep = build_case(cat_case, device)
    x = x * 3
    bias = random_tensor((x.shape[1],), x.dtype, device, bias_seed)
    norm = stock_norm(x.shape[1], x.dtype, device, cat_case[-1] + 7)
    norm.scale = scale
    with torch.no_grad():
        normalized = norm(stock_conv_output(x, bias))
        if silu:
            normalized = nn.SiLU()(normalized)
        out, next_cache = run_impl(
            impl, rms_norm_cat_pad_5d, x, norm.gamma, norm.scale, silu, cache, padding, keep, channels_last, bias
        )
    check_outputs(out, next_cache, normalized, x, cache, padding, keep, channels_last, stock_layout=False)


@op_impl_params
@given(case=norm_cases(), with_bias=st.booleans())
@example(case=((2, 3, 2, 2, 5, 1, 1, 2, 1, 2, torch.float32, "channels_last", "cropped", 3), True, True, 1.7),
         with_bias=True)
def test_tf32_out_rounds_only_the_conv_input(device, impl, case, with_bias):
    """``tf32_out``: stock's padded output rounded to TF32 for fp32 (16-bit values are on that grid), the next cache stock's."""
    cat_case, silu, channels_last, scale = case
    x, cache, padding, keep = build_case(cat_case, device)
    x = x * 3
    bias = random_tensor((x.shape[1],), x.dtype, device, cat_case[-1] + 3) if with_bias else None
    norm = stock_norm(x.shape[1], x.dtype, device, cat_case[-1] + 7)
    norm.scale = scale
    with torch.no_grad():
        normalized = norm(x if bias is None else stock_conv_output(x, bias))
        if silu:
            normalized = nn.SiLU()(normalized)
        out, next_cache = run_impl(
            impl, rms_norm_cat_pad_5d, x, norm.gamma, norm.scale, silu, cache, padding, keep, channels_last, bias, True
        )
    check_outputs(out, next_cache, normalized, x, cache, padding, keep, channels_last, stock_layout=bias is None,
                  tf32_out=True)


def test_silu_table_holds_silu_of_every_bit_pattern():
    for dtype in (torch.bfloat16, torch.float16):
        table = silu_table("cpu", dtype)
        values = torch.tensor([0.0, -0.0, 1.5, -3.25, 70.0, -70.0, float("inf"), float("-inf")], dtype=dtype)
        got, expected = looked_up(table, values), F.silu(values)
        # silu(-inf) is NaN; ATen's CPU vector and scalar paths give it different signs.
        assert torch.equal(got.isnan(), expected.isnan())
        assert torch.equal(got[~got.isnan()].view(torch.int16), expected[~expected.isnan()].view(torch.int16))
    with pytest.raises(ValueError, match="dtype must be bf16 or fp16"):
        silu_table("cpu", torch.float32)
    x = torch.randn(1, 2, 1, 2, 3, dtype=torch.bfloat16)
    prologue = NormPrologue(_channel_norm(x), torch.ones(2, 1, 1, 1, dtype=x.dtype), 1.0, True,
                            silu_table("cpu", torch.float16))
    with pytest.raises(ValueError, match="silu_table must have 65536 entries of x's dtype"):
        launch_cat_pad_5d(x, None, (1, 1, 1, 1, 2, 0), 0, _out_strides(x, None, (1, 1, 1, 1, 2, 0), False), prologue)


@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_computed_silu_at_real_decoder_sizes_on_cuda(dtype, channels_last, shape, monkeypatch):
    """SILU_BY_TABLE off: the kernel computes SiLU as ATen does (division, libdevice expf), same bits."""
    monkeypatch.setattr(rms_module, "SILU_BY_TABLE", False)
    rms_module._silu_tables.clear()
    channels, frames, height, width, cache_frames, padding = shape
    x = random_tensor((1, channels, frames, height, width), dtype, "cuda", 0) * 3
    cache = random_tensor((1, channels, cache_frames, height, width), dtype, "cuda", 1) if cache_frames else None
    norm = stock_norm(channels, dtype, "cuda", 2)
    with torch.no_grad():
        normalized = nn.SiLU()(norm(x))
        out, next_cache = rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, cache, padding, 2, channels_last)
    assert not rms_module._silu_tables
    check_outputs(out, next_cache, normalized, x, cache, padding, 2, channels_last)


def test_silu_by_table_is_cuda_16_bit_only(monkeypatch):
    x = torch.randn(1, 2, 1, 2, 2, dtype=torch.bfloat16)
    assert rms_module.SILU_BY_TABLE  # on by default
    assert rms_module._cuda_silu_table(x, True) is None  # CPU: ATen's CPU SiLU is not one function per value
    if HAS_CUDA:
        assert rms_module._cuda_silu_table(x.cuda(), False) is None
        assert rms_module._cuda_silu_table(x.cuda().float(), True) is None
        assert rms_module._cuda_silu_table(x.cuda(), True) is silu_table("cuda", torch.bfloat16)
        monkeypatch.setattr(rms_module, "SILU_BY_TABLE", False)
        assert rms_module._cuda_silu_table(x.cuda(), True) is None


@cuda
def test_computed_silu_special_values_on_cuda(monkeypatch):
    monkeypatch.setattr(rms_module, "SILU_BY_TABLE", False)
    for dtype in (torch.bfloat16, torch.float16):
        x = special_input(dtype, "cuda")
        norm = stock_norm(4, dtype, "cuda", 3)
        with torch.no_grad():
            normalized = nn.SiLU()(norm(x))
            out, next_cache = rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, None, (1, 1, 1, 1, 2, 0), 2)
        check_outputs(out, next_cache, normalized, x, None, (1, 1, 1, 1, 2, 0), 2, False)


def special_input(dtype, device):
    """Zero and signed-zero channel vectors (norm clamped to eps), tiny and huge values, SiLU's tails."""
    x = random_tensor((2, 4, 3, 3, 5), dtype, device, 11) * 30
    x[0, :, 0, 0, 0] = 0.0
    x[0, :, 0, 0, 1] = -0.0
    x[0, :2, 0, 0, 2] = -0.0
    x[1, :, 1, 1, :] = 1e-30 if dtype == torch.float32 else 1e-6
    x[1, 0, 2, 2, :] = -1e4 if dtype == torch.float16 else -1e30
    x[1, 1, 2, 2, :] = 1e4 if dtype == torch.float16 else 1e30
    return x


@op_impl_params
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_special_values(device, impl, dtype):
    x = special_input(dtype, device)
    norm = stock_norm(4, dtype, device, 3)
    with torch.no_grad():
        normalized = nn.SiLU()(norm(x))
        out, next_cache = run_impl(impl, rms_norm_cat_pad_5d, x, norm.gamma, norm.scale, True, None, (1, 1, 1, 1, 2, 0), 2)
    check_outputs(out, next_cache, normalized, x, None, (1, 1, 1, 1, 2, 0), 2, False)
    # Signed zeros are equal as values: compare the bit patterns too.
    bits = torch.int32 if dtype == torch.float32 else torch.int16
    expected = expected_outputs(normalized, None, (1, 1, 1, 1, 2, 0), 0)[0].contiguous()
    assert torch.equal(out.view(bits), expected.view(bits))


@st.composite
def chunked_cases(draw):
    """x of several causal chunks: (batch, channels, frames per chunk, chunks, height, width), dtype, layout, a cache
    or none, channels-last output, a conv bias or none, seed."""
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 40)), draw(st.integers(1, 3)), draw(st.integers(2, 3)),
             draw(st.integers(1, 5)), draw(st.integers(1, 6)))
    return (shape, draw(st.sampled_from(DTYPES)), draw(st.sampled_from(LAYOUTS)), draw(st.booleans()),
            draw(st.booleans()), draw(st.booleans()), draw(st.integers(0, 2**16)))


@op_impl_params
@given(case=chunked_cases())
@example(case=((1, 4, 2, 3, 3, 5), torch.bfloat16, "contiguous", True, True, True, 1))
@example(case=((1, 33, 1, 2, 1, 2), torch.float32, "contiguous", False, False, True, 0))  # as above, 2 columns
def test_norm_frames_normalizes_each_chunk_on_its_own(device, impl, case):
    """norm_frames: each chunk of frames normalized as the stock modules normalize it alone (a contiguous chunk,
    its conv bias added first), then padded with the cache as one conv input."""
    (batch, channels, chunk_frames, chunks, height, width), dtype, layout, with_cache, channels_last, with_bias, seed \
        = case
    frames = chunk_frames * chunks
    x = make_layout(random_tensor((batch, channels, frames, height, width), dtype, device, seed) * 3, layout)
    cache = random_tensor((batch, channels, 2, height, width), dtype, device, seed + 1) if with_cache else None
    bias = random_tensor((channels,), dtype, device, seed + 2) if with_bias else None
    norm = stock_norm(channels, dtype, device, seed + 3)
    padding = (1, 1, 1, 1, 2, 0)
    with torch.no_grad():
        normalized = torch.cat([
            nn.SiLU()(norm(x[:, :, t:t + chunk_frames].contiguous() if bias is None else
                           stock_conv_output(x[:, :, t:t + chunk_frames], bias)))
            for t in range(0, frames, chunk_frames)
        ], 2)
        out, next_cache = run_impl(impl, rms_norm_cat_pad_5d, x, norm.gamma, norm.scale, True, cache, padding, 2,
                                   channels_last, bias, False, chunk_frames)
    check_outputs(out, next_cache, normalized, x, cache, padding, 2, channels_last, stock_layout=False)


@given(case=chunked_cases())
def test_channel_norm_of_chunks_is_each_chunks_own(case):
    """_channel_norm(x, norm_frames): the norm of each contiguous chunk on its own, concatenated (CPU: through
    each chunk's fp32 copy; CUDA's frame slices are measured in test_channel_norm_of_frame_slices_on_cuda)."""
    (batch, channels, chunk_frames, chunks, height, width), dtype, layout, _, _, _, seed = case
    x = make_layout(random_tensor((batch, channels, chunk_frames * chunks, height, width), dtype, "cpu", seed) * 3,
                    layout)
    expected = torch.cat([_channel_norm(x[:, :, t:t + chunk_frames].contiguous())
                          for t in range(0, x.shape[2], chunk_frames)], 2)
    assert torch.equal(_channel_norm(x, chunk_frames), expected)
    assert torch.equal(_channel_norm(x, x.shape[2]), _channel_norm(x)) and torch.equal(_channel_norm(x, 0), _channel_norm(x))


def test_frame_slices_are_told_apart_from_other_layouts():
    video = torch.randn(2, 8, 10, 6, 8).to(torch.bfloat16)
    assert rms_module._is_frame_slice(video) and rms_module._is_frame_slice(video[:, :, 2:4])
    assert rms_module._is_frame_slice(video[:, :, 1:3])  # starts 96 bytes in: 16-byte aligned
    assert not rms_module._is_frame_slice(video[:, :, :, 1:5])  # rows cropped
    assert not rms_module._is_frame_slice(video[:, :4])  # channels cropped: batches further apart than C planes
    assert not rms_module._is_frame_slice(video.contiguous(memory_format=torch.channels_last_3d)[:, :, 2:4])
    assert not rms_module._is_frame_slice(video.permute(0, 2, 1, 3, 4).contiguous().permute(0, 2, 1, 3, 4))
    odd = torch.randn(1, 4, 6, 3, 5).to(torch.bfloat16)  # 15-element frames: slices start unaligned
    assert not rms_module._is_frame_slice(odd[:, :, 1:3]) and rms_module._is_frame_slice(odd[:, :, 0:2])


@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("chunk_frames", [1, 2])
@pytest.mark.parametrize("shape", REAL_SHAPES + [(1024, 10, 60, 104, 2, (1, 1, 1, 1, 2, 0))], ids=str)
def test_channel_norm_of_frame_slices_on_cuda(dtype, chunk_frames, shape):
    """The measured fact norm_frames' fast path rests on: ATen's channel norm of a frame slice of a contiguous
    16-bit x, upcast inside the reduction, has the bits of the norm of that chunk's own fp32 copy (as stock's
    chunk loop reduces it), where the norm of all frames at once can differ (1024 channels at 10 frames)."""
    channels, frames, height, width = shape[:4]
    frames = max(frames, 2) * chunk_frames
    x = random_tensor((1, channels, frames, height, width), dtype, "cuda", 0) * 3
    chunks = [x[:, :, t:t + chunk_frames] for t in range(0, frames, chunk_frames)]
    expected = torch.cat([torch.linalg.vector_norm(c.contiguous().float(), dim=1, keepdim=True) for c in chunks], 2)
    assert all(rms_module._upcast_in_reduction_exact(c) for c in chunks) == (height * width % 8 == 0)
    assert torch.equal(_channel_norm(x, chunk_frames), expected)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "permuted"])
@pytest.mark.slow
def test_opcheck(requires_grad, layout):
    for device in ["cpu"] + (["cuda"] if HAS_CUDA else []):
        x = make_layout(torch.randn(2, 3, 2, 4, 5, device=device), layout).requires_grad_(requires_grad)
        gamma = torch.randn(3, 1, 1, 1, device=device).requires_grad_(requires_grad)
        cache = torch.randn(2, 3, 4, 6, 7, device=device)[:, :, 2:, 1:5, 1:6].requires_grad_(requires_grad)
        bias = torch.randn(3, device=device).requires_grad_(requires_grad)
        for args in (
            (x, gamma, 1.5, True, cache, [1, 1, 1, 1, 2, 0], 2, False),
            (x, gamma, 1.5, True, cache, [1, 1, 1, 1, 2, 0], 2, True, None, True),
            (x, gamma, 3.0, False, None, [0, 0, 1, 1, 2, 0], 0, True),
            (x, gamma, 0.5, True, cache, [1, 1, 0, 0, 3, 0], 3, False),
            (x, gamma, 1.5, True, cache, [1, 1, 1, 1, 2, 0], 2, True, bias),
            (x, gamma, 1.5, True, cache, [1, 1, 1, 1, 2, 0], 2, False, None, False, 1),
            (x, gamma, 1.5, True, cache, [1, 1, 1, 1, 2, 0], 2, True, bias, False, 1),
            (x, gamma, 1.5, True, cache, [1, 1, 1, 1, 2, 0], 2, False, None, False, 0, _x_norm(x, requires_grad)),
            (x, gamma, 1.5, True, cache, [1, 1, 1, 1, 2, 0], 2, True, bias, False, 1, _x_norm(x, requires_grad)),
        ):
            torch.library.opcheck(torch.ops.wanops.rms_norm_cat_pad_5d.default, args)


def _x_norm(x, requires_grad=False):
    """A channel norm for x, as a caller would hand it in (any positive values will do for the op's mechanics)."""
    norm = torch.linalg.vector_norm(x.detach().float(), dim=1, keepdim=True) + 0.5
    return norm.requires_grad_(requires_grad)


def test_gradcheck():
    x = torch.randn(2, 3, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    gamma = torch.randn(3, 1, 1, 1, dtype=torch.float64, requires_grad=True)
    cache = torch.randn(2, 3, 1, 3, 4, dtype=torch.float64, requires_grad=True)

    def both(x, gamma, cache):
        return rms_norm_cat_pad_5d(x, gamma, 3**0.5, True, cache, (1, 1, 2, 2, 2, 0), 2)

    assert torch.autograd.gradcheck(both, (x, gamma, cache))

    bias = torch.randn(3, dtype=torch.float64, requires_grad=True)

    def with_bias(x, gamma, cache, bias):
        return rms_norm_cat_pad_5d(x, gamma, 3**0.5, True, cache, (1, 1, 2, 2, 2, 0), 2, True, bias)

    assert torch.autograd.gradcheck(with_bias, (x, gamma, cache, bias))


def test_gradients_equal_the_stock_modules():
    x = torch.randn(1, 3, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    norm = stock_norm(3, torch.float64, "cpu", 5)
    out, kept = rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, None, (1, 1, 1, 1, 2, 0), 2)
    ref_out, ref_kept = expected_outputs(nn.SiLU()(norm(x)), None, (1, 1, 1, 1, 2, 0), 2)
    grads = [torch.randn_like(out), torch.randn_like(kept)]
    got = torch.autograd.grad((out, kept), (x, norm.gamma), grads)
    expected = torch.autograd.grad((ref_out, ref_kept), (x, norm.gamma), grads)
    for a, b in zip(got, expected):
        assert torch.equal(a, b)


@op_impl_params
@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("norm_frames", [0, 1])
def test_given_x_norm_divides_as_the_reduced_one(device, impl, with_bias, norm_frames):
    """Handed the norm the op would reduce itself, the op gives the same outputs; handed another, it divides by that."""
    x = make_layout(random_tensor((2, 24, 2, 3, 5), torch.bfloat16, device, 0) * 3, "channels_last")
    gamma = random_tensor((24, 1, 1, 1), torch.bfloat16, device, 1)
    cache = random_tensor((2, 24, 2, 3, 5), torch.bfloat16, device, 2)
    bias = random_tensor((24,), torch.bfloat16, device, 3) if with_bias else None
    total = x if bias is None else (x + bias.view(1, -1, 1, 1, 1)).contiguous()
    reduced = torch.cat([torch.linalg.vector_norm(chunk.float(), dim=1, keepdim=True)
                         for chunk in frame_chunks(total, norm_frames)], 2)
    args = (x, gamma, 2.0, True, cache, (1, 1, 1, 1, 2, 0), 2, True, bias, False, norm_frames)
    expected = run_impl(impl, rms_norm_cat_pad_5d, *args)
    for got, want in zip(run_impl(impl, rms_norm_cat_pad_5d, *args, reduced), expected):
        assert torch.equal(got, want) and got.stride() == want.stride()
    doubled = run_impl(impl, rms_norm_cat_pad_5d, *args, reduced * 2)
    halved = rms_norm_silu_reference(total, gamma, 2.0, True, reduced * 2)
    assert not torch.equal(doubled[0], expected[0])
    assert torch.equal(doubled[0][:, :, 2:, 1:-1, 1:-1], halved)


@exact_strides_graphs
@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(dynamic):
    gamma = torch.randn(3, 1, 1, 1)
    assert_compiled_conv_input_matches(
        lambda x, cache: rms_norm_cat_pad_5d(x, gamma, 3**0.5, True, cache, (1, 1, 1, 1, 2, 0), 2), dynamic
    )


def _call(x, gamma, cache, **overrides):
    args = dict(scale=2.0, silu=True, padding=(1, 1, 1, 1, 2, 0), keep_cache_frames=2, channels_last=False, bias=None,
                tf32_out=False, norm_frames=0, x_norm=None)
    args.update(overrides)
    return rms_norm_cat_pad_5d(x, gamma, args["scale"], args["silu"], cache, args["padding"],
                               args["keep_cache_frames"], args["channels_last"], args["bias"], args["tf32_out"],
                               args["norm_frames"], args["x_norm"])


INVALID = [
    (lambda x, g, c: _call(x, g[0], c), ValueError, "gamma must be a 4-D"),
    (lambda x, g, c: _call(x, "g", c), TypeError, "gamma must be a torch.Tensor"),
    (lambda x, g, c: _call(x, g[:2], c), ValueError, r"gamma must have shape \(C, 1, 1, 1\)"),
    (lambda x, g, c: _call(x, g.double(), c), TypeError, "gamma must have the dtype of x"),
    (lambda x, g, c: _call(x, g, c, scale="2"), TypeError, "scale must be a float"),
    (lambda x, g, c: _call(x, g, c, silu=1), TypeError, "silu must be a bool"),
    (lambda x, g, c: _call(x, g, c, channels_last=None), TypeError, "channels_last must be a bool"),
    (lambda x, g, c: _call(x, g, c, tf32_out=1), TypeError, "tf32_out must be a bool"),
    (lambda x, g, c: _call(x[0], g, c), ValueError, "x must be a 5-D"),
    (lambda x, g, c: _call(x, g, c[:, :2]), ValueError, "cache must match x in channels"),
    (lambda x, g, c: _call(x, g, c, padding=(1, 0, 1, 1, 2, 0)), ValueError, "padding must be symmetric in width"),
    (lambda x, g, c: _call(x, g, c, padding=(1, 1, 1, 1, 1, 0)), ValueError, "more than the front padding"),
    (lambda x, g, c: _call(x, g, c, keep_cache_frames=-1), ValueError, "keep_cache_frames must be >= 0"),
    (lambda x, g, c: _call(x, g, c, bias=g), ValueError, "bias must be a 1-D tensor"),
    (lambda x, g, c: _call(x, g, c, bias=2.0), TypeError, "bias must be a torch.Tensor or None"),
    (lambda x, g, c: _call(x, g, c, bias=g[:2].flatten()), ValueError, "bias must have one entry per channel"),
    (lambda x, g, c: _call(x, g, c, bias=g.flatten().double()), TypeError, "bias must have the dtype of x"),
    (lambda x, g, c: _call(x, g, c, norm_frames=1.0), TypeError, "norm_frames must be an int"),
    (lambda x, g, c: _call(x, g, c, norm_frames=True), TypeError, "norm_frames must be an int"),
    (lambda x, g, c: _call(x, g, c, norm_frames=-1), ValueError, "norm_frames must be 0 or a positive divisor"),
    (lambda x, g, c: _call(torch.cat([x] * 3, 2), g, c, norm_frames=2), ValueError,
     "norm_frames must be 0 or a positive divisor of x's 3 frames, got 2"),
    (lambda x, g, c: _call(x, g, c, x_norm=1.0), TypeError, "x_norm must be a torch.Tensor or None"),
    (lambda x, g, c: _call(x, g, c, x_norm=_x_norm(x)[0]), ValueError, "x_norm must be a 5-D"),
    (lambda x, g, c: _call(x, g, c, x_norm=_x_norm(x)[..., :2]), ValueError,
     r"x_norm must have shape \(B, 1, T, H, W\) = \(2, 1, 1, 4, 5\)"),
    (lambda x, g, c: _call(x, g, c, x_norm=_x_norm(x).half()), TypeError, "x_norm must be float32"),
    (lambda x, g, c: _call(x, g, c, x_norm=_x_norm(x).to("meta")), ValueError, "x_norm must be on the device of x"),
]


@pytest.mark.parametrize("call,error,message", INVALID, ids=[m for _, _, m in INVALID])
def test_invalid_arguments_name_the_argument(call, error, message):
    x = torch.randn(2, 3, 1, 4, 5)
    with pytest.raises(error, match=message):
        call(x, torch.randn(3, 1, 1, 1), torch.randn(2, 3, 2, 4, 5))


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "permuted"])  # permuted: resample outputs
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_real_decoder_sizes_on_cuda(dtype, layout, channels_last, shape):
    channels, frames, height, width, cache_frames, padding = shape
    x = make_layout(random_tensor((1, channels, frames, height, width), dtype, "cuda", 0) * 3, layout)
    cache = None
    if cache_frames:
        buffer = random_tensor((1, channels, cache_frames, height + 2, width + 2), dtype, "cuda", 1)
        cache = make_layout(buffer, layout)[:, :, :, 1:-1, 1:-1]
    norm = stock_norm(channels, dtype, "cuda", 2)
    rms_module._silu_tables.clear()
    with torch.no_grad():
        normalized = nn.SiLU()(norm(x))
        out, next_cache = rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, cache, padding, 2, channels_last)
    assert bool(rms_module._silu_tables) == (dtype != torch.float32)  # 16-bit SiLU by table, the default
    check_outputs(out, next_cache, normalized, x, cache, padding, 2, channels_last)
    if dtype == torch.float32 and channels_last:  # the decoder's TF32-grid conv inputs
        with torch.no_grad():
            out, next_cache = rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, cache, padding, 2, True, None, True)
        check_outputs(out, next_cache, normalized, x, cache, padding, 2, channels_last, tf32_out=True)


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "permuted"])
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_channel_norm_is_the_norm_of_the_fp32_copy_on_cuda(dtype, layout, shape):
    # _channel_norm upcasts inside the reduction for contiguous and frame-major 16-bit x
    # (no fp32 copy): it must give the bits of F.normalize's norm of x.float().
    channels, frames, height, width = shape[:4]
    x = make_layout(random_tensor((2, channels, frames, height, width), dtype, "cuda", 0) * 3, layout)
    assert torch.equal(_channel_norm(x), torch.linalg.vector_norm(x.float(), dim=1, keepdim=True))


# More of Wan2.2's 1024-channel norm geometries at 480x832 (channels, frames, height, width): the latent stage's and
# the up blocks' chunks, which ATen reduces with its channels split over blocks (16, 16, 5 and 3 on an H200).
WIDE_NORM_SHAPES = [(1024, 5, 30, 52), (1024, 2, 60, 104), (1024, 10, 60, 104),
                    (1024, 4, 120, 208)]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [s[:4] for s in REAL_SHAPES] + WIDE_NORM_SHAPES, ids=str)
def test_channel_norm_kernel_is_atens_at_real_decoder_sizes_on_cuda(dtype, shape):
    """The measured fact RAW_CONV_OUTPUT_NORMS rests on: at the decoder's norm sizes ATen's CUDA channel norm
    of a contiguous x adds in channel_norm_kernel's order, with ATen's block split at 1024 channels (16
    channels, the latent conv's input, which no norm sees, adds in another); the op's check says what the
    comparison says."""
    x = random_tensor((1, *shape), dtype, "cuda", 0) * 3
    same = torch.equal(launch_channel_norm(x), _channel_norm(x))
    rms_module._kernel_norm_verdicts.clear()
    assert kernel_norm_is_atens(x) == same
    if shape[0] >= 96:
        assert same
    # The order does not depend on the layout the kernel reads.
    assert torch.equal(launch_channel_norm(x.contiguous(memory_format=torch.channels_last_3d)), launch_channel_norm(x))


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape, norm_frames", [((1024, 5, 30, 52), 1), ((1024, 10, 60, 104), 2),
                                                ((1024, 4, 120, 208), 0)], ids=str)
def test_wide_raw_conv_outputs_by_chunk_on_cuda(dtype, shape, norm_frames):
    """Wan2.2's 1024-channel raw conv outputs, several chunks per call as the latent stage runs them: each
    chunk's norm is reduced with the block split of a chunk's column count (not of all frames'), by the kernel."""
    channels, frames, height, width = shape
    raw = (random_tensor((1, *shape), dtype, "cuda", 0) * 3).contiguous(memory_format=torch.channels_last_3d)
    bias = random_tensor((channels,), dtype, "cuda", 1)
    norm = stock_norm(channels, dtype, "cuda", 2)
    chunk = norm_frames or frames
    rms_module._kernel_norm_verdicts.clear()
    with torch.no_grad():
        normalized = torch.cat([nn.SiLU()(norm(stock_conv_output(raw[:, :, t:t + chunk], bias)))
                                for t in range(0, frames, chunk)], 2)
        out, next_cache = rms_norm_cat_pad_5d(raw, norm.gamma, norm.scale, True, None, (1, 1, 1, 1, 2, 0), 2, True,
                                              bias, False, norm_frames)
    assert list(rms_module._kernel_norm_verdicts.values()) == [True]
    check_outputs(out, next_cache, normalized, raw, None, (1, 1, 1, 1, 2, 0), 2, True, stock_layout=False)


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("verdict", [None, False], ids=["checked", "refused"])
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_raw_conv_output_at_real_decoder_sizes_on_cuda(dtype, verdict, shape, monkeypatch):
    """A channels-last raw conv output and its bias give stock's norm of the conv output, whether the
    op's check takes channel_norm_kernel or refuses it (the sum is then written out for ATen)."""
    channels, frames, height, width, cache_frames, padding = shape
    raw = random_tensor((1, channels, frames, height, width), dtype, "cuda", 0) * 3
    raw = raw.contiguous(memory_format=torch.channels_last_3d)
    bias = random_tensor((channels,), dtype, "cuda", 1)
    cache = random_tensor((1, channels, cache_frames, height, width), dtype, "cuda", 2) if cache_frames else None
    cache = None if cache is None else cache.contiguous(memory_format=torch.channels_last_3d)
    norm = stock_norm(channels, dtype, "cuda", 3)
    monkeypatch.setattr(rms_module, "_kernel_norm_verdicts", {} if verdict is None else
                        {(tuple(raw.shape), dtype, raw.device): verdict})
    with torch.no_grad():
        normalized = nn.SiLU()(norm(stock_conv_output(raw, bias)))
        out, next_cache = rms_norm_cat_pad_5d(raw, norm.gamma, norm.scale, True, cache, padding, 2, True, bias)
    check_outputs(out, next_cache, normalized, raw, cache, padding, 2, True, stock_layout=False)


@cuda
def test_int64_indexing_beyond_2_pow_31_elements():
    # 1 x 96 x 4 x 2050 x 5502 bf16 padded output > 2**31 elements (x alone is ~2.16e9).
    skip_unless_free_gpu_memory(32)
    x = random_tensor((1, 96, 2, 2048, 5500), torch.bfloat16, "cuda", 0) * 3
    cache = random_tensor((1, 96, 2, 2048, 5500), torch.bfloat16, "cuda", 1)
    norm = stock_norm(96, torch.bfloat16, "cuda", 2)
    with torch.no_grad():
        out, kept = rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, cache, (1, 1, 1, 1, 2, 0), 2)
        assert out.numel() > 2**31
        # The norm is per position, so a window of x normalizes on its own: check the last
        # rows and columns (offsets past 2**31) against the stock modules.
        window = x[:, :, :, -7:, -9:]
        expected = nn.SiLU()(norm(window))
    assert torch.equal(out[:, :, 2:, -8:-1, -10:-1], expected)
    assert torch.equal(kept[:, :, :, -7:, -9:], expected)
    assert torch.equal(out[:, :, :2, 1:-1, 1:-1], cache)
    assert out[..., -1].count_nonzero() == 0 and out[:, :, :, -1].count_nonzero() == 0
