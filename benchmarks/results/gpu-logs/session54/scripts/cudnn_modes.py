"""Session 54: wanops' decode with cuDNN's other plan choices, interleaved with stock and the default (CUDA).

cuDNN's benchmark mode picks each conv's plan by its time alone (session 33: the same kernel families, the per-conv
sum 2% slower); inside a power-capped decode a plan's energy counts, not its time alone (session 46). PyTorch keys
its plan cache with `deterministic`, so the two rows below get plans of their own beside the default's:
  deterministic: cuDNN's heuristics with nondeterministic engines filtered out (the control),
  deterministic+benchmark: the fastest timed of those.
Every row's first decode is checked against stock's bits and strides. (Its rounds and report were then moved into
interleaved_levers.timed_in_rounds, which prints the same numbers with wider name columns.)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

import torch

BENCHMARKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 4)
sys.path.insert(0, BENCHMARKS)
sys.path.insert(0, os.path.dirname(BENCHMARKS))

from interleaved_levers import timed_in_rounds  # noqa: E402

from torch_wanops.bench import add_decode_case_arguments, decode_case, describe_cuda_case, variant  # noqa: E402

ROWS = {
    "diffusers-eager": ("diffusers-eager", {}),
    "wanops-eager": ("wanops-eager", {}),
    "wanops-deterministic": ("wanops-eager", {"deterministic": True}),
    "wanops-deterministic-benchmark": ("wanops-eager", {"deterministic": True, "benchmark": True}),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    print(describe_cuda_case(args), flush=True)
    vae, latents = decode_case(args, "cuda")

    def decode(row: str) -> torch.Tensor:
        name, flags = ROWS[row]
        with variant(vae, name), torch.no_grad(), (
                torch.backends.cudnn.flags(enabled=True, **flags) if flags else contextlib.nullcontext()):
            return vae.decode(latents, return_dict=False)[0]

    reference = decode("diffusers-eager")
    wanops = [row for row in ROWS if row != "diffusers-eager"]
    for row in wanops:
        start = time.perf_counter()
        decode(row)
        warm = time.perf_counter() - start
        out = decode(row)
        print(f"{row}: warm-up {warm:.1f} s, stock's bits {torch.equal(out, reference)}, "
              f"strides {out.stride() == reference.stride()}", flush=True)
    del out, reference
    timed_in_rounds(decode, wanops, args.rounds)


if __name__ == "__main__":
    main()
