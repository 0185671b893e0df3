"""Where a decode leaves the GPU idle (CUDA): the gaps between its kernels, and the decode with a head start.

    python benchmarks/idle_gaps.py --model wan2.2 --dtype bf16 --variants diffusers-eager wanops-eager

Per variant, after two warm-up decodes:
- ``plain``: median GPU time from an event recorded when the decode is called to one after it
  (the bench's timing: the GPU waits for the CPU's first launches and wherever the CPU falls behind);
- ``head start``: the same, the start event recorded behind a ~100 ms sleep kernel, so the CPU has
  queued the decode's first launches before the GPU reaches them;
- one decode's kernel timeline (``torch.profiler``, CUDA activity only, so little CPU overhead):
  kernel time, idle time between its first and last kernel, the idle per 10% of the decode, and
  the largest gaps with the kernels around them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from typing import NamedTuple

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import add_decode_case_arguments, describe_cuda_case, warm_cuda_decodes  # noqa: E402

SLEEP_CYCLES = 200_000_000  # ~0.1 s at the H200's ~1.98 GHz


def gpu_time_s(decode, head_start: bool) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    if head_start:
        torch.cuda._sleep(SLEEP_CYCLES)
    start.record()
    decode()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3


class Gap(NamedTuple):
    us: float  # how long no kernel ran
    at_us: float  # when it began, from the first kernel's start
    before: str  # the kernel that ended last before it
    after: str  # the kernel that ended it


def idle_gaps(kernels: list[tuple[float, float, str]]) -> tuple[float, list[Gap]]:
    """(span, gaps) of kernels given as (start, end, name) in microseconds: the time from the first start to the
    last end, and every stretch in it when no kernel ran (kernels that overlap, on several streams, leave none)."""
    kernels = sorted(kernels)
    first = busy_end = kernels[0][0]
    previous = kernels[0][2]
    gaps = []
    for start, end, name in kernels:
        if start > busy_end:
            gaps.append(Gap(start - busy_end, busy_end - first, previous, name))
        if end > busy_end:
            busy_end, previous = end, name
    return busy_end - first, gaps


def timeline(decode, top: int) -> list[str]:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        decode()
        torch.cuda.synchronize()
    kernels = [(e.time_range.start, e.time_range.end, e.name) for e in prof.events()
               if e.device_type == torch.autograd.DeviceType.CUDA]
    span, gaps = idle_gaps(kernels)
    idle = sum(gap.us for gap in gaps)
    lines = [f"  kernels {len(kernels)}, span {span / 1e6:.4f} s, idle inside it {idle / 1e6:.4f} s "
             f"({len(gaps)} gaps, {sum(1 for gap in gaps if gap.us > 10)} over 10 us)"]
    bins = [0.0] * 10
    for gap in gaps:
        bins[min(9, int(10 * gap.at_us / span))] += gap.us
    lines.append("  idle per tenth of the span (ms): " + " ".join(f"{b / 1e3:.2f}" for b in bins))
    for gap in sorted(gaps, reverse=True)[:top]:
        lines.append(f"  {gap.us / 1e3:7.3f} ms at {gap.at_us / 1e3:8.2f} ms  after {gap.before[:50]}  "
                     f"before {gap.after[:50]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--variants", nargs="+", default=["diffusers-eager", "wanops-eager"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    print(describe_cuda_case(args), flush=True)
    for name, decode in warm_cuda_decodes(args, args.variants):
        times = {mode: [] for mode in ("plain", "head start")}
        for _ in range(args.repeats):  # interleaved, so drifts in clock or temperature hit both
            for mode in times:
                times[mode].append(gpu_time_s(decode, mode == "head start"))
        medians = {mode: statistics.median(values) for mode, values in times.items()}
        print(f"{name}: plain {medians['plain']:.4f} s, head start {medians['head start']:.4f} s "
              f"(difference {medians['plain'] - medians['head start']:.4f} s)", flush=True)
        print("\n".join(timeline(decode, args.top)), flush=True)


if __name__ == "__main__":
    main()
