"""benchmarks/memory_decode.py's replay of the allocator trace, and its CPU trace from the profiler."""

import importlib.util
from pathlib import Path

import torch

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "memory_decode.py"
spec = importlib.util.spec_from_file_location("memory_decode", SCRIPT)
memory_decode = importlib.util.module_from_spec(spec)
spec.loader.exec_module(memory_decode)


def frames(filename, line=1, name="f"):
    return [{"filename": "/site/torch/nn/functional.py", "line": 9, "name": "conv"},
            {"filename": filename, "line": line, "name": name}]


def test_live_at_peak_replays_allocs_and_completed_frees():
    trace = [
        {"action": "alloc", "addr": 1, "size": 100, "frames": frames("/x/torch_wanops/decoder.py", 10)},
        {"action": "alloc", "addr": 2, "size": 50, "frames": frames("/x/diffusers/autoencoder_kl_wan.py", 20)},
        {"action": "free_requested", "addr": 1, "size": 100, "frames": []},  # not yet free
        {"action": "alloc", "addr": 3, "size": 30, "frames": frames("/elsewhere.py")},
        {"action": "free_completed", "addr": 1, "size": 100, "frames": []},
        {"action": "free_completed", "addr": 99, "size": 7, "frames": []},  # allocated before the trace
        {"action": "alloc", "addr": 4, "size": 60, "frames": frames("/x/torch_wanops/decoder.py", 11)},
    ]
    peak, blocks = memory_decode.live_at_peak(trace)
    assert peak == 180
    assert sorted(block["addr"] for block in blocks) == [1, 2, 3]


MIB = 2**20


def allocate_12_mib_at_most():
    first = torch.empty(MIB, dtype=torch.uint8)
    second = torch.empty(8 * MIB, dtype=torch.uint8)
    third = torch.empty(3 * MIB, dtype=torch.uint8)
    del second, third
    return first, torch.empty(2 * MIB, dtype=torch.uint8)


def test_cpu_trace_finds_the_peak_and_the_allocating_function():
    peak, blocks = memory_decode.live_at_peak(memory_decode.cpu_trace(allocate_12_mib_at_most))
    assert peak == 12 * MIB
    assert sorted(block["size"] for block in blocks) == [MIB, 3 * MIB, 8 * MIB]
    for block in blocks:
        assert "allocate_12_mib_at_most" in [frame["name"] for frame in block["frames"]]


def test_allocation_site_is_the_innermost_own_frame():
    assert memory_decode.allocation_site(frames("/x/torch_wanops/decoder.py", 42, "resample")) == \
        "decoder.py:42 resample"
    assert memory_decode.allocation_site(frames("/elsewhere.py")) == "(outside torch_wanops/diffusers)"
