"""In which order does ATen's CUDA channel norm add its squares? (CUDA)

    python benchmarks/probe_reduction_order.py

The fused norm kernel takes its fp32 channel norm from ATen (``vector_norm(x, dim=1)``), so
the tensor it normalises must first be written where ATen can read it, in a layout whose
reduction order is stock's. A kernel that reduced the channels itself, in ATen's order,
could normalise a conv's channels-last output directly (its bias added on the way in) and
skip that pass. This probe measures whether ATen's order is one of a simple family, at the
decoder's norm shapes: each thread sums the channels ``y, y + by, y + 2 by, ...`` into
``vt`` accumulators taken in turn, adds them up in order, and the ``by`` threads of a
column then combine in a shared-memory tree (``Reduce.cuh``'s thread and block-y reduce).
Squares of 16-bit values are exact in fp32, so contraction does not matter there; fp32
inputs are tried with the square rounded (``acc + x * x``) and fused (``fma``).

Prints, per shape, dtype and layout, the (vt, by) candidates that give ATen's bits in
every column, or the fewest mismatching columns if none does.
"""

from __future__ import annotations

import itertools

import torch

NORM_SHAPES = [(1, 96, 4, 480, 832), (1, 192, 4, 240, 416), (1, 384, 4, 120, 208), (1, 384, 2, 60, 104),
               (1, 384, 1, 60, 104), (1, 1024, 4, 60, 104), (1, 512, 3, 120, 208), (1, 256, 4, 240, 416),
               (2, 256, 1, 30, 52), (1, 96, 2, 64, 64)]
VECTOR_ACCUMULATORS = (1, 2, 4, 8)
THREADS_PER_COLUMN = (1, 2, 4, 8, 16, 32, 64)


def emulated_norm(columns: torch.Tensor, vt: int, by: int, fused: bool) -> torch.Tensor:
    """sqrt of the sum of squares over the channels of ``columns`` (C, N) fp32, in the (vt, by) order."""
    channels = columns.shape[0]
    thread_sums = []
    for y in range(by):
        accumulators = [torch.zeros_like(columns[0]) for _ in range(vt)]
        for j, c in enumerate(range(y, channels, by)):
            value = columns[c]
            if fused:  # fma(x, x, acc): the product is exact in fp64, one rounding to fp32 (double rounding aside)
                accumulators[j % vt] = (accumulators[j % vt].double() + value.double() * value.double()).float()
            else:
                accumulators[j % vt] = accumulators[j % vt] + value * value
        total = accumulators[0]
        for other in accumulators[1:]:
            total = total + other
        thread_sums.append(total)
    offset = by // 2
    while offset > 0:
        for y in range(offset):
            if y + offset < by:
                thread_sums[y] = thread_sums[y] + thread_sums[y + offset]
        offset //= 2
    return torch.sqrt(thread_sums[0])


def probe(shape: tuple[int, ...], dtype: torch.dtype, layout: str) -> str:
    x = (torch.randn(shape, device="cuda") * 3).to(dtype)
    if layout == "frame-major":
        x = x.transpose(1, 2).contiguous().transpose(1, 2)
    elif layout == "channels-last":
        x = x.contiguous(memory_format=torch.channels_last_3d)
    aten = torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32).reshape(-1)
    columns = x.float().movedim(1, 0).reshape(shape[1], -1)
    results = []
    for vt, by, fused in itertools.product(VECTOR_ACCUMULATORS, THREADS_PER_COLUMN, (False, True)):
        if fused and dtype != torch.float32:
            continue  # identical to the unfused order: the square of a 16-bit value is exact
        if by > shape[1]:
            continue
        mismatches = int((emulated_norm(columns, vt, by, fused) != aten).sum())
        results.append((mismatches, vt, by, fused))
    exact = [f"vt={vt} by={by}{' fma' if fused else ''}" for m, vt, by, fused in results if m == 0]
    if exact:
        return "matches " + ", ".join(exact)
    m, vt, by, fused = min(results)
    return f"no match; closest vt={vt} by={by}{' fma' if fused else ''}: {m} of {aten.numel()} columns differ"


def main() -> None:
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    for shape, dtype, layout in itertools.product(NORM_SHAPES, (torch.bfloat16, torch.float32),
                                                  ("contiguous", "frame-major", "channels-last")):
        print(f"{str(shape):24} {str(dtype):15} {layout:13} {probe(shape, dtype, layout)}", flush=True)


if __name__ == "__main__":
    main()
