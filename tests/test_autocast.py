"""Decodes under autocast run stock diffusers' modules (decoder.runs_stock_under_autocast).

On CUDA autocast reduces F.normalize's norm in fp32 and keeps the norm, gamma and SiLU in fp32 until the next
conv's cast, so stock's bits under autocast are not the bits the ops reproduce. On the CPU autocast leaves the
norm alone (no AutocastCPU kernel for linalg_vector_norm), so here the routing is what is tested: no op of the
walk runs, and the output is stock's under the same autocast. The CUDA test checks the bits where they differ.
"""

import logging

import pytest
import torch
from conftest import cuda
from test_decoder import latents, pair

import torch_wanops
from torch_wanops import decoder as decoder_module
from torch_wanops.compile import is_compiled
from torch_wanops.configs import build_vae

ARCHS = ("wan2.1-tiny", "wan2.2-tiny")
AUTOCAST_DTYPES = (torch.bfloat16, torch.float16)


@pytest.fixture
def walk_forbidden(monkeypatch):
    """The walk's first step raises: a decode that takes the ops fails the test."""
    def causal_conv(*args, **kwargs):
        raise AssertionError("the wanops walk ran under autocast")

    monkeypatch.setattr(decoder_module, "causal_conv", causal_conv)
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


@pytest.mark.parametrize("tiled", [False, True], ids=["whole", "tiled"])
@pytest.mark.parametrize("autocast_dtype", AUTOCAST_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("arch", ARCHS)
def test_decode_under_autocast_runs_stocks_modules(walk_forbidden, arch, dtype, autocast_dtype, tiled):
    stock, omni = pair(arch, dtype)
    z = latents(arch, dtype, "cpu", frames=3, height=6 if tiled else 4, width=7 if tiled else 6)
    _assert_stock_bits(_decode(omni, z, autocast_dtype, tiled=tiled), _decode(stock, z, autocast_dtype, tiled=tiled))


def test_apply_to_under_autocast_runs_stocks_modules(walk_forbidden):
    """A stock VAE after apply_to: its batched frame loop hands the decode to stock's _decode under autocast."""
    stock, _ = pair("wan2.2-tiny")
    vae = torch_wanops.apply_to(build_vae("wan2.2-tiny", seed=0))
    z = latents("wan2.2-tiny", torch.float32, "cpu", frames=4, batch=2)
    _assert_stock_bits(_decode(vae, z, torch.bfloat16), _decode(stock, z, torch.bfloat16))


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
    warnings = [record for record in caplog.records if "autocast is on for cpu" in record.getMessage()]
    assert len(warnings) == 1 and "not faster" in warnings[0].getMessage()


def test_autocast_disabled_takes_the_ops(monkeypatch):
    """``torch.autocast(..., enabled=False)`` is no autocast: the walk runs (and gives stock's bits)."""
    walked = []
    causal_conv = decoder_module.causal_conv

    def counted(*args, **kwargs):
        walked.append(1)
        return causal_conv(*args, **kwargs)

    monkeypatch.setattr(decoder_module, "causal_conv", counted)
    stock, omni = pair("wan2.1-tiny")
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=2)
    expected = _decode(stock, z, torch.bfloat16, enabled=False)
    _assert_stock_bits(_decode(omni, z, torch.bfloat16, enabled=False), expected)
    assert walked


@cuda
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
@pytest.mark.parametrize("autocast_dtype", AUTOCAST_DTYPES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("arch", ARCHS)
def test_decode_under_cuda_autocast_gives_stocks_bits(arch, dtype, autocast_dtype, compiled):
    """On CUDA, where autocast changes stock's arithmetic (the norms in fp32), the decode under autocast is
    stock's under the same autocast, eager and through compile_vae."""
    stock, _ = pair(arch, dtype, "cuda")
    vae = torch_wanops.apply_to(build_vae(arch, seed=0, dtype=dtype, device="cuda"))
    if compiled:
        torch_wanops.compile_vae(vae, enabled=True)
    z = latents(arch, dtype, "cuda", frames=5, batch=2)
    _assert_stock_bits(_decode(vae, z, autocast_dtype, "cuda"), _decode(stock, z, autocast_dtype, "cuda"))


def test_a_device_type_without_autocast_takes_the_ops():
    """Meta tensors (benchmarks/memory_estimate.py's decodes) have no autocast to ask about: not stock's modules."""
    assert "meta" not in decoder_module.AUTOCAST_DEVICE_TYPES
    assert not decoder_module.runs_stock_under_autocast(torch.empty(1, 2, 1, 2, 2, device="meta"))
    assert {"cpu", "cuda"} <= decoder_module.AUTOCAST_DEVICE_TYPES
