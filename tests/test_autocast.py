"""Decodes under autocast: where autocast leaves stock's decode alone (autocast's dtype is the VAE's and the
latents', diffusers >= 0.38), the walk runs with autocast set aside and gives stock's bits; elsewhere stock
diffusers' modules run (decoder.runs_stock_under_autocast).

Autocast to another dtype than the VAE's changes stock's arithmetic (its convs cast fp32 to 16 bits, an fp32
parameter widens what it multiplies), so those decodes must not take the ops; the routing is tested here on the CPU
(no op of the walk runs, stock's output under the same autocast) and the bits on CUDA, where autocast has its own
lists (the norm and the upsample in fp32).
"""

import logging

import diffusers
import pytest
import torch
from conftest import cuda, exact_strides_graphs
from packaging.version import Version
from torch._dynamo.utils import counters
from test_decoder import latents, pair, real_or_tiny_latents

import torch_wanops
from torch_wanops import decoder as decoder_module
from torch_wanops.compile import is_compiled
from torch_wanops.configs import build_vae

ARCHS = ("wan2.1-tiny", "wan2.2-tiny")
# diffusers < 0.36 tiles Wan2.2's patchified latents with the unpatchified strides (stock's own tiled decode raises).
STOCK_TILES_PATCHIFIED_LATENTS = Version(diffusers.__version__) >= Version("0.36")


def _skip_broken_stock_tiling(arch, tiled):
    if tiled and arch == "wan2.2-tiny" and not STOCK_TILES_PATCHIFIED_LATENTS:
        pytest.skip(f"diffusers {diffusers.__version__}'s tiled decode fails on Wan2.2's patchified latents")


@pytest.fixture
def walk_forbidden(monkeypatch):
    """The walk's first step raises: a decode that takes the ops fails the test."""
    def causal_conv(*args, **kwargs):
        raise AssertionError("the wanops walk ran under autocast")

    monkeypatch.setattr(decoder_module, "causal_conv", causal_conv)
    _batched_loop_everywhere_and_warnings_anew(monkeypatch)


def _batched_loop_everywhere_and_warnings_anew(monkeypatch):
    # The batched frame loop on the CPU too, so that its routing is tested (by default CUDA only).
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_DEVICES", frozenset({"cpu", "cuda"}))
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_MIN_ELEMENTS", 0)
    monkeypatch.setattr(decoder_module, "_autocast_devices_logged", set())


def _decode(vae, z, dtype, device="cpu", enabled=True, tiled=False):
    if tiled:  # tiles of 4 latents, 3 apart
        scale = vae.spatial_compression_ratio
        vae.enable_tiling(tile_sample_min_height=4 * scale, tile_sample_min_width=4 * scale,
                          tile_sample_stride_height=3 * scale, tile_sample_stride_width=3 * scale)
    with torch.no_grad(), torch.autocast(device, dtype=dtype, enabled=enabled):
        return vae.decode(z, return_dict=False)[0]


def _assert_stock_bits(got, expected):
    assert got.dtype == expected.dtype and got.stride() == expected.stride()
    assert torch.equal(got, expected)


# (VAE dtype, autocast dtype) pairs where autocast changes stock's decode, and where it leaves it alone.
CHANGING = [(torch.float32, torch.bfloat16), (torch.float32, torch.float16), (torch.bfloat16, torch.float16),
            (torch.float16, torch.bfloat16)]
NEUTRAL = [(torch.bfloat16, torch.bfloat16), (torch.float16, torch.float16)]


@pytest.mark.parametrize("tiled", [False, True], ids=["whole", "tiled"])
@pytest.mark.parametrize("dtype,autocast_dtype", CHANGING, ids=str)
@pytest.mark.parametrize("arch", ARCHS)
def test_decode_under_autocast_runs_stocks_modules(walk_forbidden, arch, dtype, autocast_dtype, tiled):
    _skip_broken_stock_tiling(arch, tiled)
    stock, omni = pair(arch, dtype)
    z = latents(arch, dtype, "cpu", frames=3, height=6 if tiled else 4, width=7 if tiled else 6)
    _assert_stock_bits(_decode(omni, z, autocast_dtype, tiled=tiled), _decode(stock, z, autocast_dtype, tiled=tiled))


@pytest.fixture
def walk_counted(monkeypatch):
    """The autocast state each step of the walk saw, one entry per causal conv of a decode's walk."""
    seen = []
    causal_conv = decoder_module.causal_conv

    def counted(conv, x, *args, **kwargs):
        seen.append(torch.is_autocast_enabled(x.device.type))
        return causal_conv(conv, x, *args, **kwargs)

    monkeypatch.setattr(decoder_module, "causal_conv", counted)
    _batched_loop_everywhere_and_warnings_anew(monkeypatch)
    return seen


@pytest.mark.parametrize("tiled", [False, True], ids=["whole", "tiled"])
@pytest.mark.parametrize("dtype,autocast_dtype", NEUTRAL, ids=str)
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.slow
def test_decode_under_autocast_to_its_dtype_takes_the_ops(walk_counted, arch, dtype, autocast_dtype, tiled, caplog):
    """Autocast to the VAE's own dtype: the walk runs, with autocast off inside it, and gives stock's bits under
    that autocast, which are stock's without it; nothing is logged. Before diffusers 0.38 (CI's 0.35 step) the
    norm is another, and stock's modules run."""
    _skip_broken_stock_tiling(arch, tiled)
    stock, omni = pair(arch, dtype)
    z = latents(arch, dtype, "cpu", frames=3, batch=2, height=6 if tiled else 4, width=7 if tiled else 6)
    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        got = _decode(omni, z, autocast_dtype, tiled=tiled)
    expected = _decode(stock, z, autocast_dtype, tiled=tiled)
    _assert_stock_bits(got, expected)
    _assert_stock_bits(got, _decode(stock, z, autocast_dtype, enabled=False, tiled=tiled))
    if decoder_module.NORM_IS_INSTALLED_DIFFUSERS[dtype]:
        assert walk_counted and not any(walk_counted)
        assert not caplog.records
    else:
        assert not walk_counted and "changes stock's arithmetic" in caplog.text


def test_autocast_with_a_parameter_in_another_dtype_runs_stocks_modules(walk_forbidden):
    """A bf16 VAE with one fp32 parameter under bf16 autocast: autocast casts that weight (without autocast the conv
    would fail), so stock's modules run."""
    stock, omni = pair("wan2.2-tiny", torch.bfloat16)
    for model in (stock, omni):
        model.decoder.conv_out.float()
    z = latents("wan2.2-tiny", torch.bfloat16, "cpu", frames=3)
    _assert_stock_bits(_decode(omni, z, torch.bfloat16), _decode(stock, z, torch.bfloat16))


def test_autocast_before_diffusers_0_38s_norm_runs_stocks_modules(walk_forbidden, monkeypatch):
    """Where the installed norm is not 0.38's (NORM_IS_INSTALLED_DIFFUSERS), CUDA autocast keeps its division,
    gamma and SiLU in fp32: stock's modules run even at the VAE's dtype."""
    monkeypatch.setitem(decoder_module.NORM_IS_INSTALLED_DIFFUSERS, torch.bfloat16, False)
    stock, omni = pair("wan2.1-tiny", torch.bfloat16)
    z = latents("wan2.1-tiny", torch.bfloat16, "cpu", frames=3)
    _assert_stock_bits(_decode(omni, z, torch.bfloat16), _decode(stock, z, torch.bfloat16))


def test_fp32_latents_under_autocast_to_the_vaes_dtype(walk_counted):
    """fp32 latents, a bf16 VAE, bf16 autocast: stock's frame loop runs (autocast casts the latents in
    post_quant_conv), and its chunks, bf16 by then, take the walk with autocast set aside (diffusers >= 0.38)."""
    stock, omni = pair("wan2.1-tiny", torch.bfloat16)
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=3)
    _assert_stock_bits(_decode(omni, z, torch.bfloat16), _decode(stock, z, torch.bfloat16))
    assert not any(walk_counted) and bool(walk_counted) == decoder_module.NORM_IS_INSTALLED_DIFFUSERS[torch.bfloat16]


def test_apply_to_under_autocast_runs_stocks_modules(walk_forbidden):
    """A stock VAE after apply_to: its batched frame loop hands the decode to stock's _decode under autocast."""
    stock, _ = pair("wan2.2-tiny")
    vae = torch_wanops.apply_to(build_vae("wan2.2-tiny", seed=0))
    z = latents("wan2.2-tiny", torch.float32, "cpu", frames=4, batch=2)
    _assert_stock_bits(_decode(vae, z, torch.bfloat16), _decode(stock, z, torch.bfloat16))


@exact_strides_graphs
def test_compiled_decoder_under_autocast_runs_stocks_modules_and_stays_compiled(walk_forbidden, monkeypatch):
    """compile_vae's forward runs the eager decoder under autocast (stock's modules), without calling its graphs
    (a graph called would fail here, and a failing graph turns the compiled path off for good)."""
    def compiled_graph(*args, **kwargs):
        raise AssertionError("a compiled graph ran under autocast")

    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: compiled_graph)
    stock, omni = pair("wan2.1-tiny")
    assert torch_wanops.compile_vae(omni, enabled=True)
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=3)
    for _ in range(2):  # the second decode would take the graphs (the first of each chunk signature is eager)
        _assert_stock_bits(_decode(omni, z, torch.bfloat16), _decode(stock, z, torch.bfloat16))
    assert is_compiled(omni)


def test_autocast_is_logged_once_per_device_type(walk_forbidden, caplog):
    stock, omni = pair("wan2.1-tiny")
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=2)
    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        for _ in range(2):
            _decode(omni, z, torch.bfloat16)
    warnings = [record for record in caplog.records if "autocast to torch.bfloat16 on cpu" in record.getMessage()]
    assert len(warnings) == 1 and "not faster" in warnings[0].getMessage()


def test_autocast_disabled_takes_the_ops(walk_calls):
    """``torch.autocast(..., enabled=False)`` is no autocast: the walk runs (and gives stock's bits)."""
    stock, omni = pair("wan2.1-tiny")
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=2)
    expected = _decode(stock, z, torch.bfloat16, enabled=False)
    _assert_stock_bits(_decode(omni, z, torch.bfloat16, enabled=False), expected)
    assert walk_calls


# torch < 2.13's CPU graphs do not round 16-bit intermediates as eager does (test_compile.py).
@pytest.mark.skipif(torch.torch_version.TorchVersion(torch.__version__) < "2.13",
                    reason="torch < 2.13's CPU graphs do not round 16-bit intermediates as eager "
                           "(measured: 2.11, 2.12.1)")
@pytest.mark.slow
def test_compiled_decode_under_autocast_to_its_dtype_runs_the_same_graphs():
    """compile_vae's forward sets a neutral autocast aside to the state its graphs were compiled under: the graphs
    prewarm compiled without autocast run, none is added, and the decode has stock's bits under that autocast.
    exact=False and the ops' reference code, as test_compile.py's 16-bit CPU graphs."""
    torch._dynamo.reset()
    counters.clear()
    stock, omni = pair("wan2.1-tiny", torch.bfloat16)
    assert torch_wanops.compile_vae(omni, enabled=True, exact=False)
    z = latents("wan2.1-tiny", torch.bfloat16, "cpu", frames=3)
    with torch_wanops.reference_kernels():
        assert torch_wanops.prewarm(omni, tuple(z.shape))
        graphs = counters["stats"]["unique_graphs"]
        got = _decode(omni, z, torch.bfloat16)
        expected = _decode(stock, z, torch.bfloat16)
    assert graphs == 2 and counters["stats"]["unique_graphs"] == graphs and not counters["graph_break"]
    _assert_stock_bits(got, expected)
    assert is_compiled(omni)


@cuda
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("dtype,autocast_dtype", CHANGING + NEUTRAL, ids=str)
@pytest.mark.parametrize("arch", ARCHS)
def test_decode_under_cuda_autocast_gives_stocks_bits(walk_counted, arch, dtype, autocast_dtype, compiled):
    """On CUDA, where autocast also keeps the norm and the nearest upsample in fp32, the decode under autocast is
    stock's under the same autocast, eager and through compile_vae: through the walk (autocast set aside) at the
    VAE's own dtype, through stock's modules at another."""
    stock, _ = pair(arch, dtype, "cuda")
    vae = torch_wanops.apply_to(build_vae(arch, seed=0, dtype=dtype, device="cuda"))
    if compiled:
        torch_wanops.compile_vae(vae, enabled=True)
    z = latents(arch, dtype, "cuda", frames=5, batch=2)
    _assert_stock_bits(_decode(vae, z, autocast_dtype, "cuda"), _decode(stock, z, autocast_dtype, "cuda"))
    if not compiled:  # a compiled chunk's graph calls no Python
        assert bool(walk_counted) == (dtype == autocast_dtype) and not any(walk_counted)


@cuda
@pytest.mark.parametrize("arch", ["wan2.1", "wan2.2"])
def test_real_configs_under_cuda_autocast_to_bf16_give_stocks_bits(walk_counted, arch):
    """The serving engines' case: a bf16 VAE decoding under bf16 autocast, real configs at 240x416 (the per-geometry
    conv checks run with autocast set aside): the walk, and stock's bits."""
    stock, omni = pair(arch, torch.bfloat16, "cuda")
    z = real_or_tiny_latents(arch, torch.bfloat16)
    _assert_stock_bits(_decode(omni, z, torch.bfloat16, "cuda"), _decode(stock, z, torch.bfloat16, "cuda"))
    assert walk_counted and not any(walk_counted)


def test_a_device_type_without_autocast_takes_the_ops():
    """Meta tensors (benchmarks/memory_estimate.py's decodes) have no autocast to ask about: not stock's modules."""
    assert "meta" not in decoder_module.AUTOCAST_DEVICE_TYPES
    assert not decoder_module.runs_stock_under_autocast(torch.empty(1, 2, 1, 2, 2, device="meta"))
    assert {"cpu", "cuda"} <= decoder_module.AUTOCAST_DEVICE_TYPES
