"""Session 54: where compiled wanops' first calls go (CUDA). The H100 bench of this session (and session 51's on
the H200) did not finish compiled wanops' warm-up decodes of Wan2.2 bf16 480x832x81 in ~430 s, where session 24
took 125-183 s. Here at the full spatial size but few frames (the graphs are the same: one per first chunk, one
per later chunk), each decode is timed with the graph count after it, then Dynamo's compile times.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
from torch._dynamo.callback import on_compile_end, on_compile_start
from torch._dynamo.utils import compile_times, counters

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 5))

import torch_wanops  # noqa: E402
from torch_wanops.bench import add_decode_case_arguments, decode_case, describe_cuda_case  # noqa: E402

# Dynamo's and Inductor's totals per graph: tracing and compiling, Inductor's part, waiting for its kernels' compiles.
SUMMARY = ("_compile.compile_inner", "compile_fx_inner", "async_compile.wait")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--decodes", type=int, default=4)
    parser.add_argument("--device", default="cuda", help="cpu: a smoke test of the script")
    args = parser.parse_args()
    if args.device == "cuda":
        print(describe_cuda_case(args), flush=True)
    vae, latents = decode_case(args, args.device)
    began = time.perf_counter()
    # Each graph's compile, as it starts and ends (a command's limit may cut the run inside a decode).
    on_compile_start(lambda *_: print(f"  {time.perf_counter() - began:7.1f} s: a compile starts", flush=True))
    on_compile_end(lambda *_: print(f"  {time.perf_counter() - began:7.1f} s: a compile ended, unique graphs "
                                    f"{counters['stats']['unique_graphs']}", flush=True))
    print("compile_vae:", torch_wanops.compile_vae(vae, enabled=True), flush=True)
    for index in range(args.decodes):
        start = time.perf_counter()
        with torch.no_grad():
            vae.decode(latents, return_dict=False)
        if args.device == "cuda":
            torch.cuda.synchronize()
        print(f"decode {index}: {time.perf_counter() - start:.1f} s, "
              f"unique graphs {counters['stats']['unique_graphs']}, "
              f"graph breaks {sum(counters['graph_break'].values())}, "
              f"compiled {torch_wanops.compile.is_compiled(vae)}", flush=True)
        # Each decode's running totals, in case the command's limit cuts the run.
        for line in compile_times(repr="str").splitlines():
            if line.startswith(SUMMARY):
                print("  " + line, flush=True)
    print(compile_times(repr="str"), flush=True)


if __name__ == "__main__":
    main()
