"""A whole lossless decode replayed as one CUDA graph: what the decode takes when the CPU costs nothing (CUDA).

    python benchmarks/graph_replay.py --model wan2.2 --dtype bf16

After two warm-up decodes with wanops-eager (every per-geometry check and Triton compile done), one decode is
captured (``torch.cuda.graph``) on a static copy of the latents. Prints whether replays give stock's bits and
strides (on the captured latents and on a second set copied in), the memory the graph's pool holds, then stock,
eager and graphed decodes interleaved (wall time with syncs, as the bench times them; graphed = copy the latents
in, replay, clone the output out) with ratios over stock, and each one's kernel timeline (``idle_gaps.timeline``).

A measurement, not a feature: the replay removes every CPU launch cost (the one lever left on the GPU's idle time,
sessions 35-40) and nothing else; the pool stays reserved for as long as the graph lives.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from idle_gaps import timeline  # noqa: E402

from torch_wanops.bench import add_decode_case_arguments, decode_case, describe_cuda_case, variant  # noqa: E402


def wall_s(fn: Callable[[], object]) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--top", type=int, default=5, help="largest gaps listed per timeline")
    args = parser.parse_args()
    print(describe_cuda_case(args), flush=True)
    vae, latents = decode_case(args, "cuda")

    def decode(z: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return vae.decode(z, return_dict=False)[0]

    other_latents = torch.randn_like(latents)
    with variant(vae, "diffusers-eager"):
        reference, other_reference = decode(latents), decode(other_latents)
    with variant(vae, "wanops-eager"):
        for _ in range(2):
            decode(latents)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        allocated, reserved = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
        torch.cuda.reset_peak_memory_stats()
        static_latents = latents.clone()
        graph = torch.cuda.CUDAGraph()
        start = time.perf_counter()
        with torch.cuda.graph(graph):
            static_out = decode(static_latents)
        torch.cuda.synchronize()
    print(f"captured in {time.perf_counter() - start:.2f} s; the graph's pool reserves "
          f"{(torch.cuda.memory_reserved() - reserved) / 2**30:.2f} GiB (capture peak "
          f"{(torch.cuda.max_memory_allocated() - allocated) / 2**30:.2f} GiB)", flush=True)

    def graphed() -> torch.Tensor:
        static_latents.copy_(latents)
        graph.replay()
        return static_out.clone()

    for name, z, expected in (("captured latents", latents, reference), ("other latents", other_latents,
                                                                        other_reference)):
        static_latents.copy_(z)
        graph.replay()
        print(f"replay, {name}: stock's bits {torch.equal(static_out, expected)}, "
              f"strides {static_out.stride() == expected.stride()}", flush=True)
    del other_reference
    # Each decode with its variant in force (the graph needs none: it replays what was captured).
    decodes = {"stock": ("diffusers-eager", lambda: decode(latents)),
               "eager": ("wanops-eager", lambda: decode(latents)),
               "graphed": ("wanops-eager", graphed)}
    times: dict[str, list[float]] = {name: [] for name in decodes}
    for _ in range(args.repeats):  # interleaved, so drifts in clock or temperature hit all three
        for name, (state, fn) in decodes.items():
            with variant(vae, state):
                times[name].append(wall_s(fn))
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(f"{name}: median {medians[name]:.4f} s ({medians['stock'] / medians[name]:.3f}x over stock); "
              f"runs {' '.join(f'{t:.4f}' for t in values)}", flush=True)
    print(f"graphed output: stock's bits {torch.equal(graphed(), reference)}", flush=True)
    for name in ("eager", "graphed"):
        state, fn = decodes[name]
        with variant(vae, state):
            print(f"{name} timeline:", flush=True)
            print("\n".join(timeline(fn, args.top)), flush=True)


if __name__ == "__main__":
    main()
