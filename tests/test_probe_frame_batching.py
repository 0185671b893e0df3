"""benchmarks/probe_frame_batching.py: its batched stage computes stock's chunked stage (CPU, float64)."""

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from torch_wanops.configs import build_vae

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "probe_frame_batching.py"
spec = importlib.util.spec_from_file_location("probe_frame_batching", SCRIPT)
probe = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = probe
spec.loader.exec_module(probe)


@pytest.mark.parametrize("model", ["wan2.1-tiny", "wan2.2-tiny"])
@pytest.mark.parametrize("group", [2, 3, 5])
def test_batched_stage_is_the_chunked_stage(model, group):
    # float64 leaves rounding far below what a wrong cache or padding would change; the bits are the GPU's question.
    vae = build_vae(model, dtype=torch.float64)
    z = torch.randn(1, vae.config.z_dim, 5, 6, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with torch.no_grad():
        x = vae.post_quant_conv(z)
        chunked = probe.stage_in_groups(vae.decoder, x, 1)
        batched = probe.stage_in_groups(vae.decoder, x, group)
    assert batched.shape == chunked.shape == (1, vae.decoder.mid_block.resnets[0].conv1.in_channels, 5, 6, 7)
    torch.testing.assert_close(batched, chunked, rtol=1e-12, atol=1e-12)
    assert not torch.allclose(batched[:, :, 1:], batched[:, :, :-1])  # frames differ: the cache protocol matters


def test_a_cache_left_out_changes_the_later_chunks():
    vae = build_vae("wan2.1-tiny", dtype=torch.float64)
    x = torch.randn(1, vae.config.z_dim, 4, 6, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with torch.no_grad():
        chunked = probe.stage_in_groups(vae.decoder, x, 1)
        uncached = torch.cat([probe.run_stage(vae.decoder, x[:, :, t:t + 1], [None] * 64) for t in range(4)], 2)
    torch.testing.assert_close(uncached[:, :, 0], chunked[:, :, 0], rtol=0, atol=0)
    assert not torch.allclose(uncached[:, :, 1:], chunked[:, :, 1:])


@pytest.mark.parametrize(("frames", "group", "temporal", "chunks"), [(5, 1, False, 5), (5, 2, False, 3), (7, 2, True, 3)])
def test_probe_op_covers_every_output_frame_once(frames, group, temporal, chunks):
    x = torch.arange(frames, dtype=torch.float64).view(1, 1, frames, 1, 1)
    calls = []

    def op(chunk):
        calls.append(chunk.shape[2])
        return chunk[:, :, 2:] if temporal else chunk

    out, _ = probe.probe_op(op, x, group, temporal)
    assert len(calls) == chunks
    expected = x[:, :, 2:] if temporal else x
    assert torch.equal(out, expected)


def test_equal_frames_counts_frames():
    a = torch.zeros(1, 2, 4, 3, 3)
    b = a.clone()
    b[0, 1, 2, 0, 0] = 1
    assert probe.equal_frames(a, b) == 3


def test_cpu_timer_takes_the_median_of_three_calls():
    calls = []
    ms = probe.timer(torch.device("cpu"))(lambda: calls.append(1))
    assert len(calls) == 3 and ms >= 0


@pytest.mark.parametrize("model", ["wan2.1-tiny", "wan2.2-tiny"])
def test_op_rows_map_each_frame_to_its_output_frame(model):
    vae = build_vae(model, dtype=torch.float64)
    x = torch.randn(1, vae.config.z_dim, 4, 6, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    rows = probe.op_rows(vae.decoder, x)
    assert any(label.startswith("conv_in") for label, _, _ in rows)
    for label, op, op_input in rows:
        temporal = "conv," in label
        alone, _ = probe.probe_op(op, op_input, 1, temporal)
        together, _ = probe.probe_op(op, op_input, 2, temporal)
        assert alone.shape[2] == x.shape[2], label
        torch.testing.assert_close(together, alone, rtol=1e-12, atol=1e-12, msg=label)


@pytest.mark.parametrize("model", ["wan2.1-tiny", "wan2.2-tiny"])
def test_step_outputs_are_the_stage_taken_apart(model):
    vae = build_vae(model, dtype=torch.float64)
    x = torch.randn(1, vae.config.z_dim, 5, 6, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with torch.no_grad():
        chunked = probe.step_outputs_in_groups(vae.decoder, x, 1)
        batched = probe.step_outputs_in_groups(vae.decoder, x, 3)
        stage = probe.stage_in_groups(vae.decoder, x, 1)
    names = list(chunked)
    assert names[:2] == ["conv_in", "mid_block.resnets.0"] and "mid_block.attentions.0" in names
    assert names[-1] == f"up_blocks.0.resnets.{len(vae.decoder.up_blocks[0].resnets) - 1}"
    assert torch.equal(chunked[names[-1]], stage)  # the last step's output is the stage's
    for name in names:
        assert chunked[name].shape[2] == 5, name
        torch.testing.assert_close(batched[name], chunked[name], rtol=1e-12, atol=1e-12, msg=name)
