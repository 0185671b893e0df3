"""benchmarks/profile_decode.py's tables from kernel totals (no GPU needed)."""

import os
import sys
from types import SimpleNamespace

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from profile_decode import kernel_table, kernel_totals, main, shared_kernels  # noqa: E402

CONV = "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize256x128x64_warpgroupsize2x1x1_g1_"
SPLIT, UNSPLIT = CONV + "execute_segment_k_on_kernel__5x_cudnn", CONV + "execute_segment_k_off_kernel__5x_cudnn"


def test_kernel_table_adds_kernels_that_share_a_cut_name():
    total, lines = kernel_table({SPLIT: [0.6, 126], UNSPLIT: [0.9, 463], "cat_pad_5d_kernel": [0.2, 754]}, top=5)
    assert total == 1.7
    assert lines[1].split()[:3] == ["1.5000", "s", "589"] and lines[1].endswith(CONV[:90])
    assert lines[2].split()[:3] == ["0.2000", "s", "754"] and len(lines) == 3


def test_shared_kernels_pairs_the_same_kernel_on_as_many_calls():
    stock = {SPLIT: [0.5506, 126], UNSPLIT: [0.9477, 483], "nchwToNhwcKernel": [0.2334, 1445], "tiny": [0.0001, 5]}
    wanops = {SPLIT: [0.6202, 126], UNSPLIT: [0.9714, 463], "cat_pad_5d_kernel": [0.1739, 754], "tiny": [0.0001, 5]}
    lines = shared_kernels(stock, wanops)
    assert len(lines) == 1  # the unsplit kernel ran other calls; the layout pass only in stock; "tiny" too small
    assert lines[0].split()[:6] == ["126", "calls", "0.5506", "s", "0.6202", "s"]
    assert lines[0].split()[6] == "1.126x" and lines[0].endswith(SPLIT[:110])


def test_kernel_totals_leave_out_inductors_graph_ranges():
    """A compiled decode's profile shows each graph's "## Call CompiledFxGraph <key> ##" range on the GPU too, around
    its kernels (gpu-logs/session56/C: 1.060 s of them beside 1.051 s of kernels); only the kernels count."""
    cuda, cpu = torch.autograd.DeviceType.CUDA, torch.autograd.DeviceType.CPU

    def event(name, device_type, us):
        return SimpleNamespace(name=name, device_type=device_type, device_time_total=us)

    events = [event("## Call CompiledFxGraph fmrx26lgne74 ##", cuda, 52_000.0), event(UNSPLIT, cuda, 30_000.0),
              event("cat_pad_5d_kernel", cuda, 4_000.0), event(UNSPLIT, cuda, 20_000.0),
              event("aten::convolution", cpu, 90_000.0)]
    totals = kernel_totals(SimpleNamespace(events=lambda: events))
    assert dict(totals) == {UNSPLIT: [0.05, 2], "cat_pad_5d_kernel": [0.004, 1]}


def test_unknown_variants_are_refused_before_the_decoder_is_built(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["--variants", "wanops-eager", "wanops-fast"])
    assert raised.value.code == 2
    error = capsys.readouterr().err
    assert "--variants takes diffusers-eager, wanops-eager, diffusers-compiled, wanops-compiled" in error
    assert "got 'wanops-fast'" in error
