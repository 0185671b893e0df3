"""The CPU's side of a decode (CUDA): how long issuing its launches takes, and where that time goes.

    python benchmarks/cpu_profile_decode.py --model wan2.2 --dtype bf16 --frames 5

The GPU is held by a ~2 s sleep kernel queued first, so the CPU never waits for it while it
issues the decode (keep the decode under CUDA's ~1000 queued launches: a few frames); the time
until ``decode`` returns is then the CPU's own cost. Prints that time for several repeats, median and least (after
two warm-up decodes), then one decode under cProfile: the functions with the most own time, and
the library's functions by cumulative time.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import add_decode_case_arguments, describe_cuda_case, warm_cuda_decodes  # noqa: E402

SLEEP_CYCLES = 4_000_000_000  # ~2 s at the H200's ~1.98 GHz


def issue_time_s(decode) -> float:
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    start = time.perf_counter()
    decode()
    issued = time.perf_counter() - start
    torch.cuda.synchronize()
    return issued


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--variants", nargs="+", default=["wanops-eager", "diffusers-eager"])
    parser.add_argument("--repeats", type=int, default=7)  # the GPU machine's CPU times spread by up to 2x
    parser.add_argument("--top", type=int, default=35)
    args = parser.parse_args()
    print(describe_cuda_case(args), flush=True)
    for name, decode in warm_cuda_decodes(args, args.variants):
        times = [issue_time_s(decode) for _ in range(args.repeats)]
        print(f"{name}: issuing the decode took {statistics.median(times) * 1e3:.2f} ms of CPU, least "
              f"{min(times) * 1e3:.2f} ({', '.join(f'{t * 1e3:.2f}' for t in times)})", flush=True)
        profiler = cProfile.Profile()
        torch.cuda.synchronize()
        torch.cuda._sleep(SLEEP_CYCLES)
        profiler.enable()
        decode()
        profiler.disable()
        torch.cuda.synchronize()
        for sort, restrict in (("tottime", ()), ("cumulative", ("torch_wanops",))):
            stream = io.StringIO()
            pstats.Stats(profiler, stream=stream).sort_stats(sort).print_stats(*restrict, args.top)
            print(f"--- {name}, by {sort}{' (torch_wanops)' if restrict else ''}")
            print("\n".join(line for line in stream.getvalue().splitlines()[6:] if line.strip()), flush=True)


if __name__ == "__main__":
    main()
