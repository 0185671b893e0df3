"""The fused norm's launches for ``ncu`` (CUDA): each case's norm, then the same launch as a plain copy, twice each.

    ncu --kernel-name cat_pad_5d_kernel --launch-count 8 ... python benchmarks/ncu_norm_launches.py [--model wan2.2]

The cases are the first two of ``decompose_norm_kernel.py``'s (the first block shape's first and second norm):
eight launches, which ``benchmarks/run_on_gpu.sh ncu-norm`` profiles with source counters.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import decompose_norm_kernel as norm_launches  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(norm_launches.BLOCK_SHAPES), default="wan2.2")
    args = parser.parse_args()
    for label, channels, frames, height, width, raw in norm_launches.cases(args.model)[:2]:
        x, cache, prologue, strides = norm_launches.case_inputs(channels, frames, height, width, raw, torch.bfloat16)
        for launch_prologue in (prologue, None):
            for _ in range(2):
                norm_launches.run_kernel(x, cache, launch_prologue, strides)
        print(label, flush=True)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
