"""benchmarks/memory_decode.py's replay of the allocator trace (the GPU run itself needs CUDA)."""

import importlib.util
from pathlib import Path

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


def test_allocation_site_is_the_innermost_own_frame():
    assert memory_decode.allocation_site(frames("/x/torch_wanops/decoder.py", 42, "resample")) == \
        "decoder.py:42 resample"
    assert memory_decode.allocation_site(frames("/elsewhere.py")) == "(outside torch_wanops/diffusers)"
