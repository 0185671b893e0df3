"""Where a decode's GPU time goes: CUDA kernels of one decode, grouped by name (CUDA).

    python benchmarks/profile_decode.py --model wan2.1 --dtype bf16 --variants diffusers-eager wanops-eager

Variants are bench_decode's and its lever switches, each warmed up by two decodes.
Prints, per variant, the decode's wall time, the total kernel time and the top kernels (time, calls, share), then
the top ATen ops by the kernel time they launched, per input shapes (which op a generic
kernel such as ``elementwise_kernel`` serves); writes the same to
profile_<model>_<dtype>_<variant>.txt under --out. With two variants, last, the kernels both ran as often (the
same convs, say) with each variant's time: the same work at another speed in the two decodes.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import LEVER_SWITCHES, VARIANTS, add_decode_case_arguments, warm_cuda_decodes  # noqa: E402


def is_annotation(name: str) -> bool:
    """A range the profiler shows on the GPU beside the kernels, not a kernel: Inductor's "## Call CompiledFxGraph
    <key> ##" around each graph (counted too, a compiled decode's kernel time would count twice)."""
    return name.startswith("## ") and name.endswith(" ##")


def kernel_totals(prof: torch.profiler.profile) -> dict[str, list[float]]:
    """Seconds and calls per CUDA kernel name."""
    totals: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and not is_annotation(event.name):
            entry = totals[event.name]
            entry[0] += event.device_time_total / 1e6
            entry[1] += 1
    return totals


def shared_kernels(first: dict[str, list[float]], second: dict[str, list[float]], min_s: float = 0.001) -> list[str]:
    """The kernels both decodes ran as often (the same kernel on the same calls, as a conv of one geometry set),
    the first's time, the second's and their ratio: where the same work ran at another speed (session 44, E: stock's
    and wanops' cuDNN kernels at 720x1280)."""
    lines = []
    for name, (seconds, calls) in sorted(first.items(), key=lambda item: -item[1][0]):
        other = second.get(name)
        if other is None or other[1] != calls or max(seconds, other[0]) < min_s:
            continue
        lines.append(f"{calls:6d} calls {seconds:8.4f} s {other[0]:8.4f} s {other[0] / seconds:6.3f}x  {name[:110]}")
    return lines


def kernel_table(totals: dict[str, list[float]], top: int) -> tuple[float, list[str]]:
    """The total and the ``top`` kernels by time, names cut to 90 characters (kernels sharing a cut name added)."""
    rows: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0])
    for name, (seconds, calls) in totals.items():
        rows[name[:90]][0] += seconds
        rows[name[:90]][1] += calls
    total = sum(t for t, _ in rows.values())
    lines = [f"total CUDA kernel time {total:.3f} s"]
    for name, (seconds, calls) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:top]:
        lines.append(f"{seconds:8.4f} s {calls:6d} calls {100 * seconds / total:5.1f}%  {name}")
    return total, lines


def op_table(prof: torch.profiler.profile, top: int) -> list[str]:
    """The ops (grouped with their input shapes) whose own kernels took the most device time."""
    def self_device_s(event) -> float:
        # torch >= 2.4 calls it device time; older releases cuda time.
        return getattr(event, "self_device_time_total", getattr(event, "self_cuda_time_total", 0)) / 1e6

    events = [e for e in prof.key_averages(group_by_input_shape=True) if self_device_s(e) > 0]
    lines = ["", "ATen ops by the kernel time they launched (self), with input shapes:"]
    for event in sorted(events, key=self_device_s, reverse=True)[:top]:
        shapes = str(event.input_shapes)[:110]
        lines.append(f"{self_device_s(event):8.4f} s {event.count:6d} calls  {event.key}  {shapes}")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--variants", nargs="+", default=["diffusers-eager", "wanops-eager"])
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    unknown = [variant for variant in args.variants if variant not in VARIANTS and variant not in LEVER_SWITCHES]
    if unknown:
        parser.error(f"--variants takes {', '.join(VARIANTS)} or a lever switch ({', '.join(LEVER_SWITCHES)}), "
                     f"got {', '.join(map(repr, unknown))}")

    os.makedirs(args.out, exist_ok=True)
    kernels = {}
    # Each variant in force and warmed up by two decodes (cuDNN's autotuning, Triton's and a compiled variant's
    # compiles) until the next is asked for.
    for variant, decode in warm_cuda_decodes(args, args.variants):
        torch.cuda.synchronize()
        start = time.perf_counter()
        decode()  # unprofiled: the wall time the kernel time is set against (the rest: GPU idle)
        torch.cuda.synchronize()
        wall_s = time.perf_counter() - start
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities, record_shapes=True) as prof:
            decode()
            torch.cuda.synchronize()
        kernels[variant] = kernel_totals(prof)
        _, lines = kernel_table(kernels[variant], args.top)
        lines.insert(0, f"decode wall time {wall_s:.3f} s (unprofiled)")
        lines += op_table(prof, args.top)
        text = "\n".join([f"# {args.model} {args.dtype} {args.size}x{args.frames} {variant}", *lines]) + "\n"
        print(text, flush=True)
        path = os.path.join(args.out, f"profile_{args.model}_{args.dtype}_{variant}.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    if len(kernels) == 2:
        first, second = kernels
        print(f"kernels both ran as often: calls, {first} s, {second} s, ratio", flush=True)
        print("\n".join(shared_kernels(kernels[first], kernels[second])), flush=True)


if __name__ == "__main__":
    main()
