"""wanops::cat_pad_5d against plain torch.cat + F.pad, bit for bit and stride for stride."""

import pytest
import torch
import torch.nn.functional as F
from conftest import (
    DTYPES,
    HAS_CUDA,
    LAYOUTS,
    cuda,
    exact_strides_graphs,
    impl_params,
    make_layout,
    random_tensor,
    run_impl,
    skip_unless_free_gpu_memory,
)
from hypothesis import example, given, settings
from hypothesis import strategies as st

from torch_wanops import _backend
from torch_wanops.ops import cat_pad_5d



def expected_outputs(x, cache, padding, keep, channels_last=False):
    """The stock WanCausalConv3d input (laid out channels_last_3d when asked) and the next-chunk cache, written out
    in plain torch."""
    pad = list(padding)
    joined = x
    if cache is not None:
        joined = torch.cat([cache, x], dim=2)
        pad[4] -= cache.shape[2]
    out = F.pad(joined, pad)
    if channels_last:
        out = torch.empty(out.shape, dtype=out.dtype, device=out.device,
                          memory_format=torch.channels_last_3d).copy_(out)
    frames = min(keep, out.shape[2])
    h, w = x.shape[3], x.shape[4]
    kept = out[:, :, out.shape[2] - frames :, padding[2] : padding[2] + h, padding[0] : padding[0] + w]
    return out, kept


def assert_matches(x, cache, padding, keep, device, impl, channels_last=False):
    out, next_cache = run_impl(impl, cat_pad_5d, x, cache, padding, keep, channels_last)
    ref_out, ref_kept = expected_outputs(x, cache, padding, keep, channels_last)
    assert out.device == x.device and out.dtype == x.dtype
    assert out.shape == ref_out.shape
    assert out.stride() == ref_out.stride()
    assert torch.equal(out, ref_out)
    assert next_cache.shape == ref_kept.shape
    assert torch.equal(next_cache, ref_kept)
    fmt = torch.channels_last_3d if out.shape[1] > 1 and out.stride(1) == 1 else torch.contiguous_format
    assert next_cache.is_contiguous(memory_format=fmt)
    # Functional: fresh storage, never a view of an input.
    for result in (out, next_cache):
        for source in (x, cache):
            if source is not None and result.numel() and source.numel():
                assert result.untyped_storage().data_ptr() != source.untyped_storage().data_ptr()


@st.composite
def cat_pad_cases(draw):
    batch = draw(st.integers(1, 2))
    channels = draw(st.integers(1, 6))
    frames = draw(st.integers(1, 3))
    height = draw(st.integers(1, 5))
    # Widths of 16 and 32 give a row-major x into a channels-last output its column-aligned tiles (X_ALIGNED).
    width = draw(st.one_of(st.integers(1, 6), st.sampled_from([16, 32])))
    pad_h = draw(st.integers(0, 2))
    pad_w = draw(st.integers(0, 2))
    t_front = draw(st.integers(0, 3))
    cache_frames = draw(st.one_of(st.none(), st.integers(0, t_front)))
    keep = draw(st.integers(0, 3))
    dtype = draw(st.sampled_from(DTYPES))
    x_layout = draw(st.sampled_from(LAYOUTS))
    cache_layout = draw(st.sampled_from(LAYOUTS + ("cropped",)))
    seed = draw(st.integers(0, 2**16))
    channels_last = draw(st.booleans())
    return (batch, channels, frames, height, width, pad_h, pad_w, t_front, cache_frames, keep, dtype, x_layout,
            cache_layout, seed, channels_last)


def build_case(case, device):
    """(x, cache, padding, keep) of a drawn case; a 15th entry, channels_last, is cat_pad_5d's own argument."""
    (batch, channels, frames, height, width, pad_h, pad_w, t_front, cache_frames, keep, dtype, x_layout,
     cache_layout, seed) = case[:14]
    x = make_layout(random_tensor((batch, channels, frames, height, width), dtype, device, seed), x_layout)
    cache = None
    if cache_frames is not None:
        if cache_layout == "cropped":
            # A crop of a larger padded buffer, as a previous chunk's padded input would be.
            buffer = random_tensor((batch, channels, cache_frames + 1, height + 2, width + 3), dtype, device, seed + 1)
            cache = buffer[:, :, 1:, 1 : 1 + height, 2 : 2 + width]
        else:
            shape = (batch, channels, cache_frames, height, width)
            cache = make_layout(random_tensor(shape, dtype, device, seed + 1), cache_layout)
    return x, cache, (pad_w, pad_w, pad_h, pad_h, t_front, 0), keep


@impl_params()
@given(case=cat_pad_cases())
# Size-1 dims make contiguous and channels_last strides coincide: the layout rule must still hold.
@example(case=(1, 2, 1, 1, 1, 0, 0, 0, None, 0, torch.float16, "contiguous", "contiguous", 0, False))
@example(case=(2, 3, 1, 1, 4, 0, 1, 2, 1, 2, torch.float32, "channels_last", "contiguous", 0, False))
# An NCDHW x and cache into a channels-last conv input (a time conv's on the conv-layout lever).
@example(case=(1, 5, 2, 3, 4, 0, 0, 2, 2, 2, torch.bfloat16, "contiguous", "contiguous", 1, True))
@example(case=(2, 1, 1, 2, 3, 1, 1, 2, 1, 2, torch.float16, "contiguous", "cropped", 2, True))
# Column-aligned tiles: the left padding in a width block of its own, x's rows loaded as vectors.
@example(case=(2, 5, 2, 3, 32, 1, 1, 3, 2, 2, torch.bfloat16, "contiguous", "cropped", 7, True))
@example(case=(1, 3, 1, 2, 16, 0, 2, 2, 1, 3, torch.float32, "permuted", "contiguous", 8, True))
def test_matches_cat_and_pad(device, impl, case):
    x, cache, padding, keep = build_case(case, device)
    assert_matches(x, cache, padding, keep, device, impl, case[-1])


@pytest.mark.skipif(not (_backend.INTERPRETER and _backend.kernel_module("cat_pad_5d")), reason="needs TRITON_INTERPRET=1")
@pytest.mark.parametrize("grid_yz_limit", [_backend.GRID_YZ_LIMIT, 0], ids=["3d-grid", "flat-grid"])
@settings(max_examples=10)
@given(case=cat_pad_cases())
@example(case=(2, 5, 2, 3, 32, 1, 1, 3, 2, 2, torch.bfloat16, "contiguous", "cropped", 7, True))
def test_one_line_per_program_under_interpreter(case, grid_yz_limit):
    """The GPU's launch (one line per program, LINES=1) run through the interpreter, which otherwise packs lines;
    on the 3-D grid and on the flat one that lines or width blocks past CUDA's y and z limits take."""
    x, cache, padding, keep = build_case(case, "cpu")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_backend, "lines_per_program", lambda tile_elements, lines: 1)
        patch.setattr(_backend, "GRID_YZ_LIMIT", grid_yz_limit)
        assert_matches(x, cache, padding, keep, "cpu", "triton", case[-1])


@impl_params()
@pytest.mark.parametrize("dtype", [torch.float64, torch.int32], ids=str)
def test_other_dtypes_take_reference(device, impl, dtype):
    x = torch.arange(2 * 3 * 2 * 4 * 5, device=device).reshape(2, 3, 2, 4, 5).to(dtype)
    cache = (x[:, :, :1] * 2).contiguous()
    assert_matches(x, cache, (1, 1, 1, 1, 2, 0), 2, device, impl)


def test_wan_decoder_cache_protocol_chunk_loop():
    """Chunk after chunk, the fused cache gives the stock conv inputs (cache None, then tensors)."""
    torch.manual_seed(0)
    chunks = [torch.randn(1, 4, 1, 3, 5) for _ in range(4)]
    padding = (1, 1, 1, 1, 2, 0)
    stock_cache = None
    fused_cache = None
    for chunk in chunks:
        stock_in = expected_outputs(chunk, stock_cache, padding, 0)[0]
        fused_in, fused_cache = cat_pad_5d(chunk, fused_cache, padding, 2)
        assert torch.equal(fused_in, stock_in)
        # diffusers' own rule: the last two frames, topped up with the previous cache's last frame.
        next_stock = chunk[:, :, -2:].clone()
        if next_stock.shape[2] < 2 and stock_cache is not None:
            next_stock = torch.cat([stock_cache[:, :, -1:], next_stock], dim=2)
        stock_cache = next_stock
    assert torch.equal(fused_cache, stock_cache)


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "permuted"])
def test_opcheck(requires_grad, layout):
    devices = ["cpu"] + (["cuda"] if HAS_CUDA else [])
    for device in devices:
        x = make_layout(torch.randn(2, 3, 2, 4, 5, device=device), layout).requires_grad_(requires_grad)
        cache = torch.randn(2, 3, 4, 6, 7, device=device)[:, :, 2:, 1:5, 1:6].requires_grad_(requires_grad)
        for args in ((x, cache, [1, 1, 1, 1, 2, 0], 2), (x, None, [0, 0, 1, 1, 2, 0], 0),
                     (x, cache, [1, 1, 0, 0, 3, 0], 3), (x, cache, [0, 0, 0, 0, 2, 0], 2, True),
                     (x, None, [1, 1, 1, 1, 2, 0], 0, True)):
            torch.library.opcheck(torch.ops.wanops.cat_pad_5d.default, args)


def test_gradcheck():
    x = torch.randn(2, 3, 2, 3, 4, dtype=torch.float64, requires_grad=True)
    cache = torch.randn(2, 3, 1, 3, 4, dtype=torch.float64, requires_grad=True)

    def both(x, cache):
        out, kept = cat_pad_5d(x, cache, (1, 1, 2, 2, 2, 0), 2)
        return out, kept

    assert torch.autograd.gradcheck(both, (x, cache))
    assert torch.autograd.gradgradcheck(both, (x, cache))


def test_backward_is_the_matching_crop():
    x = torch.randn(1, 2, 2, 3, 4, requires_grad=True)
    cache = torch.randn(1, 2, 1, 3, 4, requires_grad=True)
    out, kept = cat_pad_5d(x, cache, (1, 1, 1, 1, 2, 0), 2)
    grad_out = torch.randn_like(out)
    grad_kept = torch.randn_like(kept)
    gx, gc = torch.autograd.grad((out, kept), (x, cache), (grad_out, grad_kept))
    crop = grad_out[:, :, :, 1:4, 1:5].clone()
    crop[:, :, -2:] += grad_kept
    assert torch.equal(gx, crop[:, :, 2:])
    assert torch.equal(gc, crop[:, :, 1:2])


def assert_compiled_conv_input_matches(build, dynamic):
    """``torch.compile(fullgraph=True)`` of ``build(x * 2, cache)`` (+1) equals eager, bits and strides."""
    torch._dynamo.reset()

    def conv_input(x, cache):
        padded, kept = build(x * 2, cache)
        return padded + 1, kept

    compiled = torch.compile(conv_input, fullgraph=True, dynamic=dynamic, backend="inductor")
    for frames, width, cache_format in ((1, 5, torch.contiguous_format), (2, 7, torch.channels_last_3d)):
        x = torch.randn(1, 3, frames, 4, width).contiguous(memory_format=torch.channels_last_3d)
        cache = torch.randn(1, 3, 2, 4, width).contiguous(memory_format=cache_format)
        expected = conv_input(x, cache)
        got = compiled(x, cache)
        for a, b in zip(got, expected):
            assert torch.equal(a, b) and a.stride() == b.stride()


@exact_strides_graphs
@pytest.mark.parametrize("dynamic", [False, True])
def test_compile_fullgraph_matches_eager(dynamic):
    assert_compiled_conv_input_matches(lambda x, cache: cat_pad_5d(x, cache, (1, 1, 1, 1, 2, 0), 2), dynamic)


INVALID = [
    (lambda x, c: cat_pad_5d(x[0], c, (1, 1, 1, 1, 2, 0)), ValueError, "x must be a 5-D"),
    (lambda x, c: cat_pad_5d(x, c[0], (1, 1, 1, 1, 2, 0)), ValueError, "cache must be a 5-D"),
    (lambda x, c: cat_pad_5d("x", c, (1, 1, 1, 1, 2, 0)), TypeError, "x must be a torch.Tensor"),
    (lambda x, c: cat_pad_5d(x, c.double(), (1, 1, 1, 1, 2, 0)), TypeError, "cache must have the dtype of x"),
    (lambda x, c: cat_pad_5d(x, c[:, :2], (1, 1, 1, 1, 2, 0)), ValueError, "cache must match x in channels"),
    (lambda x, c: cat_pad_5d(x, c[:1], (1, 1, 1, 1, 2, 0)), ValueError, "cache must match x in batch"),
    (lambda x, c: cat_pad_5d(x, c[..., :2], (1, 1, 1, 1, 2, 0)), ValueError, "cache must match x in width"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, 1, 1, 2)), ValueError, "padding must have 6 entries"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, -1, -1, 2, 0)), ValueError, "padding must be non-negative"),
    (lambda x, c: cat_pad_5d(x, c, (1, 0, 1, 1, 2, 0)), ValueError, "padding must be symmetric in width"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, 2, 1, 2, 0)), ValueError, "padding must be symmetric in height"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, 1, 1, 2, 1)), ValueError, "t_back"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, 1, 1, 1, 0)), ValueError, "more than the front padding t_front"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, 1, 1, 2, 0), -1), ValueError, "keep_cache_frames must be >= 0"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, 1, 1, 2, 0), True), TypeError, "keep_cache_frames must be an int"),
    (lambda x, c: cat_pad_5d(x, c, (1.0, 1, 1, 1, 2, 0)), TypeError, "padding"),
    (lambda x, c: cat_pad_5d(x, c, (1, 1, 1, 1, 2, 0), 2, 1), TypeError, "channels_last must be a bool"),
]


@pytest.mark.parametrize("call,error,message", INVALID, ids=[m for _, _, m in INVALID])
def test_invalid_arguments_name_the_argument(call, error, message):
    x = torch.randn(2, 3, 1, 4, 5)
    cache = torch.randn(2, 3, 2, 4, 5)
    with pytest.raises(error, match=message):
        call(x, cache)


@cuda
def test_cache_on_other_device_is_rejected():
    x = torch.randn(1, 3, 1, 4, 5, device="cuda")
    with pytest.raises(ValueError, match="cache must be on the device of x"):
        cat_pad_5d(x, torch.randn(1, 3, 2, 4, 5), (1, 1, 1, 1, 2, 0))


def test_launch_tiles_follow_the_measured_rules(monkeypatch):
    from torch_wanops import _backend

    monkeypatch.setattr(_backend, "INTERPRETER", False)
    # The rules measured on the H200 (benchmarks/results/sweep_*.txt; the norm's: gpu-logs/session14).
    assert _backend.line_tile(96, 834, False, True) == (16, 128, 4)
    assert _backend.line_tile(192, 832, True, False, True) == (64, 64, 4)
    assert _backend.line_tile(96, 834, True, True, True) == (32, 32, 2)  # the norm, NCDHW x
    assert _backend.line_tile(96, 834, True, True, False) == (32, 16, 2)  # the norm, channels-last x
    assert _backend.line_tile(384, 210, True, True, False) == (64, 32, 4)
    assert _backend.transpose_tile(96, 832) == (128, 128, 8)
    assert _backend.transpose_tile(512, 416, dup_residual=True) == (32, 128, 4)  # adding a DupUp3D shortcut


def test_line_tile_grid_is_three_dimensional_where_cuda_allows_and_else_flat():
    from torch_wanops import _backend

    assert _backend.line_tile_grid(4332, 3, 41) == (3, 41, 4332)  # channel blocks fastest, then width, then lines
    # Past CUDA's 65535 along y or z, one flat axis in the same order; only the total is limited.
    assert _backend.line_tile_grid(1, 1, 2**20) == (2**20,)
    assert _backend.line_tile_grid(2**16, 3, 2) == (2**16 * 6,)
    with pytest.raises(ValueError, match="x is too large for one launch"):
        _backend.line_tile_grid(2**16, 2**8, 2**7)


@cuda
def test_a_line_of_many_width_blocks():
    # 2**25 + 1 columns: 65537 width blocks of 512, past what a grid's y or z axis could hold.
    skip_unless_free_gpu_memory(2)
    x = torch.randn(1, 1, 1, 1, 2**25 + 1, device="cuda", dtype=torch.bfloat16)
    assert_matches(x, None, (1, 1, 0, 0, 1, 0), 1, "cuda", "triton")


# The decoder's real geometries: (channels, frames, height, width, cache frames, padding).
REAL_SHAPES = [
    (16, 1, 60, 104, 0, (1, 1, 1, 1, 2, 0)),
    (384, 1, 60, 104, 2, (1, 1, 1, 1, 2, 0)),
    (1024, 1, 30, 52, 1, (1, 1, 1, 1, 2, 0)),
    (384, 2, 120, 208, 2, (1, 1, 1, 1, 2, 0)),
    (192, 4, 240, 416, 2, (1, 1, 1, 1, 2, 0)),
    (96, 4, 480, 832, 2, (1, 1, 1, 1, 2, 0)),
    (384, 1, 120, 208, 0, (0, 0, 0, 0, 2, 0)),
    (512, 2, 60, 104, 2, (0, 0, 0, 0, 2, 0)),
    # Wan2.2's temporal upsamplers' time convs (the latent stage's five frames, then a frame's two) and conv_in.
    (1024, 5, 30, 52, 2, (0, 0, 0, 0, 2, 0)),
    (1024, 2, 60, 104, 2, (0, 0, 0, 0, 2, 0)),
    (48, 5, 30, 52, 2, (1, 1, 1, 1, 2, 0)),
]


@cuda
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("layout", ["contiguous", "channels_last", "contiguous-into-channels-last"])
@pytest.mark.parametrize("shape", REAL_SHAPES, ids=str)
def test_real_decoder_sizes_on_cuda(dtype, layout, shape):
    channels, frames, height, width, cache_frames, padding = shape
    layout, _, out_layout = layout.partition("-into-")
    x = make_layout(random_tensor((1, channels, frames, height, width), dtype, "cuda", 0), layout)
    cache = None
    if cache_frames:
        buffer = random_tensor((1, channels, cache_frames, height + 2, width + 2), dtype, "cuda", 1)
        cache = make_layout(buffer, layout)[:, :, :, 1:-1, 1:-1]
    assert_matches(x, cache, padding, 2, "cuda", "triton", out_layout == "channels-last")


@cuda
@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
def test_int64_indexing_beyond_2_pow_31_elements(layout):
    # 2 x 96 x 4 x 2050 x 1376 bf16 padded output > 2**31 elements.
    skip_unless_free_gpu_memory(24)
    x = make_layout(torch.randn(2, 96, 2, 2048, 1374, device="cuda", dtype=torch.bfloat16), layout)
    cache = make_layout(torch.randn(2, 96, 2, 2048, 1374, device="cuda", dtype=torch.bfloat16), layout)
    out, kept = cat_pad_5d(x, cache, (1, 1, 1, 1, 2, 0), 2)
    assert out.numel() > 2**31
    assert torch.equal(out[:, :, :2, 1:-1, 1:-1], cache)
    assert torch.equal(out[:, :, 2:, 1:-1, 1:-1], x)
    assert out[:, :, :, 0].count_nonzero() == 0 and out[:, :, :, -1].count_nonzero() == 0
    assert out[..., 0].count_nonzero() == 0 and out[..., -1].count_nonzero() == 0
    assert torch.equal(kept, x)
    meta = [torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta") for t in (cache, x)]
    assert out.stride() == F.pad(torch.cat(meta, 2), (1, 1, 1, 1, 0, 0)).stride()
