"""Stock, wanops-eager and lever rows decoded in turn, round after round: small gains told from drift (CUDA).

    python benchmarks/interleaved_levers.py --model wan2.2 --levers wanops-eager-aten-reduced-block-outputs

``bench_decode.py`` times each variant's runs one after the other, so a few ms of drift between them (clocks,
temperature) reads as a lever's gain or loss. Here every round decodes each variant once, the wanops variants in
alternating order, and the medians over the rounds are compared; each variant's first decode after its warm-up
is checked against stock's (bits and strides); nvidia-smi samples the SM clock and power meanwhile (clock_power.py),
since a power-limited GPU gives a pass removed back less than its kernel time. Then one decode per variant under the
profiler: its CUDA kernel time by kernel family. Lever names are ``torch_wanops.bench.LEVER_VARIANTS`` (one switch
away from the default).
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import sys
import time
from collections.abc import Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from clock_power import describe, sampled, spans_window  # noqa: E402
from graph_replay import wall_s  # noqa: E402

from torch_wanops.bench import (  # noqa: E402
    LEVER_VARIANTS,
    add_decode_case_arguments,
    decode_case,
    describe_cuda_case,
    variant,
)

# Kernel families by a piece of the kernel's name, first match wins; the rest are "other".
FAMILIES = ("xmma", "conv3d_chunked", "cat_pad_5d_kernel", "bias_add_norm_kernel", "bias_add_contiguous_kernel",
            "channel_norm_kernel", "reduce_kernel")


def family(kernel: str) -> str:
    return next((name for name in FAMILIES if name in kernel), "other")


def kernel_seconds(decode) -> collections.Counter[str]:
    """One decode's CUDA kernel time (s) by kernel family, with a "total"."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        decode()
        torch.cuda.synchronize()
    seconds = collections.Counter()
    for event in prof.key_averages():
        seconds[family(event.key)] += event.device_time_total / 1e6
    seconds["total"] = sum(seconds.values())
    return seconds


def timed_in_rounds(decode: Callable[[str], object], wanops: list[str], rounds: int, interval_ms: int = 20) -> None:
    """Stock ("diffusers-eager") and then ``wanops`` (in alternating order) decoded once each per round, every
    variant already warmed up by the caller; prints each variant's median with nvidia-smi's clock, power and energy
    over its decodes, then one decode's CUDA kernel time by family for each of ``wanops``."""
    times, spans = collections.defaultdict(list), collections.defaultdict(list)
    with sampled(interval_ms) as samples:
        for index in range(rounds):
            for name in ["diffusers-eager", *(wanops if index % 2 == 0 else wanops[::-1])]:
                start = time.time()
                times[name].append(wall_s(lambda: decode(name)))
                spans[name].append((start, time.time()))
    stock = statistics.median(times["diffusers-eager"])
    print(f"medians of {rounds} rounds (and nvidia-smi's samples over them: count, median SM clock, mean power, "
          "the median's energy at that power):")
    for name, runs in times.items():
        median = statistics.median(runs)
        print(f"  {name:45s} {median:.4f} s  {stock / median:.3f}x  runs {' '.join(f'{t:.4f}' for t in runs)}  "
              f"{describe(spans_window(samples, spans[name]), median)}")
    print("CUDA kernel seconds of one decode each, by family:")
    for name in wanops:
        seconds = kernel_seconds(lambda: decode(name))
        print(f"  {name}: " + ", ".join(f"{key} {value:.4f}" for key, value in seconds.most_common()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--levers", nargs="+", required=True, choices=LEVER_VARIANTS, metavar="LEVER",
                        help="lever rows, from torch_wanops.bench.LEVER_VARIANTS")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--interval-ms", type=int, default=20, help="nvidia-smi's sampling interval")
    args = parser.parse_args()
    print(describe_cuda_case(args), flush=True)
    vae, latents = decode_case(args, "cuda")

    def decode(name: str) -> torch.Tensor:
        with variant(vae, name), torch.no_grad():
            return vae.decode(latents, return_dict=False)[0]

    reference = decode("diffusers-eager")
    wanops = ["wanops-eager", *args.levers]
    for name in wanops:
        decode(name)  # warm-up: the per-geometry checks and compiles of this variant
        out = decode(name)
        print(f"{name}: stock's bits {torch.equal(out, reference)}, strides {out.stride() == reference.stride()}",
              flush=True)
    del out, reference
    timed_in_rounds(decode, wanops, args.rounds, args.interval_ms)


if __name__ == "__main__":
    main()
