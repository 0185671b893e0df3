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

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import add_decode_case_arguments, decode_case, variant  # noqa: E402

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


def timeline(decode, top: int) -> list[str]:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        decode()
        torch.cuda.synchronize()
    kernels = sorted(
        (e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA),
        key=lambda e: e.time_range.start,
    )
    busy_end = kernels[0].time_range.start
    first = busy_end
    gaps = []  # (gap us, at us from the first kernel, kernel before, kernel after)
    previous = kernels[0].name
    for event in kernels:
        gap = event.time_range.start - busy_end
        if gap > 0:
            gaps.append((gap, busy_end - first, previous, event.name))
        if event.time_range.end > busy_end:
            busy_end, previous = event.time_range.end, event.name
    span = busy_end - first
    idle = sum(g[0] for g in gaps)
    lines = [f"  kernels {len(kernels)}, span {span / 1e6:.4f} s, idle inside it {idle / 1e6:.4f} s "
             f"({len(gaps)} gaps, {sum(1 for g in gaps if g[0] > 10)} over 10 us)"]
    bins = [0.0] * 10
    for gap, at, _, _ in gaps:
        bins[min(9, int(10 * at / span))] += gap
    lines.append("  idle per tenth of the span (ms): " + " ".join(f"{b / 1e3:.2f}" for b in bins))
    for gap, at, before, after in sorted(gaps, reverse=True)[:top]:
        lines.append(f"  {gap / 1e3:7.3f} ms at {at / 1e3:8.2f} ms  after {before[:50]}  before {after[:50]}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--variants", nargs="+", default=["diffusers-eager", "wanops-eager"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    vae, latents = decode_case(args, "cuda")
    print(f"{args.model} {args.dtype} {args.size}x{args.frames}, {torch.cuda.get_device_name()}, "
          f"torch {torch.__version__}", flush=True)

    def decode():
        with torch.no_grad():
            return vae.decode(latents, return_dict=False)[0]

    for name in args.variants:
        with variant(vae, name):
            for _ in range(2):
                decode()
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
