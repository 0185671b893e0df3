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

Where each thread would still hold >= 256 channels (1024 channels over 4 threads), ``Reduce.cuh``
also splits the channels over ``ctas`` blocks (``setReduceConfig``'s ``ctas_per_output``, from the
column count and the GPU's SM count): thread ``y`` of block ``k`` sums channels ``y + by * k``,
``+ by * ctas``, ...; each block's tree result goes to global memory, and the last block to finish
adds them up, thread ``y`` taking blocks ``y, y + by, ...`` in turn, then the same tree. The
candidates include ATen's own ``ctas`` for the shape and its neighbours.

Prints, per shape, dtype and layout, the (vt, by) candidates that give ATen's bits in
every column, or the fewest mismatching columns if none does.
"""

from __future__ import annotations

import itertools

import torch

from torch_wanops.ops.rms_norm_cat_pad_5d import aten_ctas_per_output

NORM_SHAPES = [(1, 96, 4, 480, 832), (1, 192, 4, 240, 416), (1, 384, 4, 120, 208), (1, 384, 2, 60, 104),
               (1, 384, 1, 60, 104), (1, 1024, 4, 60, 104), (1, 512, 3, 120, 208), (1, 256, 4, 240, 416),
               (2, 256, 1, 30, 52), (1, 96, 2, 64, 64),
               # Wan2.2's 1024-channel norms: the latent stage's and the second up block's chunks, its up block outputs
               (1, 1024, 1, 30, 52), (1, 1024, 5, 30, 52), (1, 1024, 2, 60, 104), (1, 1024, 10, 60, 104),
               (1, 1024, 4, 120, 208)]
VECTOR_ACCUMULATORS = (1, 2, 4, 8)
THREADS_PER_COLUMN = (1, 2, 4, 8, 16, 32, 64)


def tree_sum(values: list[torch.Tensor]) -> torch.Tensor:
    """``block_y_reduce``: slot y adds slot y + offset, for offsets halving from len / 2."""
    values = list(values)
    offset = len(values) // 2
    while offset > 0:
        for y in range(offset):
            if y + offset < len(values):
                values[y] = values[y] + values[y + offset]
        offset //= 2
    return values[0]


def emulated_norm(columns: torch.Tensor, vt: int, by: int, fused: bool, ctas: int = 1) -> torch.Tensor:
    """sqrt of the sum of squares over the channels of ``columns`` (C, N) fp32, in the (vt, by, ctas) order."""
    channels = columns.shape[0]
    block_sums = []
    for k in range(ctas):
        thread_sums = []
        for y in range(by):
            accumulators = [torch.zeros_like(columns[0]) for _ in range(vt)]
            for j, c in enumerate(range(y + by * k, channels, by * ctas)):
                value = columns[c]
                if fused:  # fma(x, x, acc): the product is exact in fp64, one rounding to fp32 (double rounding aside)
                    accumulators[j % vt] = (accumulators[j % vt].double() + value.double() * value.double()).float()
                else:
                    accumulators[j % vt] = accumulators[j % vt] + value * value
            total = accumulators[0]
            for other in accumulators[1:]:
                total = total + other
            thread_sums.append(total)
        block_sums.append(tree_sum(thread_sums))
    if ctas == 1:
        return torch.sqrt(block_sums[0])
    # The last block: thread y adds blocks y, y + by, ... to its identity (0), then the tree.
    finals = []
    for y in range(by):
        total = torch.zeros_like(columns[0])
        for block in block_sums[y::by]:
            total = total + block
        finals.append(total)
    return torch.sqrt(tree_sum(finals))


def probe(shape: tuple[int, ...], dtype: torch.dtype, layout: str) -> str:
    x = (torch.randn(shape, device="cuda") * 3).to(dtype)
    if layout == "frame-major":
        x = x.transpose(1, 2).contiguous().transpose(1, 2)
    elif layout == "channels-last":
        x = x.contiguous(memory_format=torch.channels_last_3d)
    aten = torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32).reshape(-1)
    columns = x.float().movedim(1, 0).reshape(shape[1], -1)
    properties = torch.cuda.get_device_properties(x.device)
    expected_ctas = aten_ctas_per_output(shape[1], columns.shape[1], properties.multi_processor_count,
                                         properties.max_threads_per_multi_processor)
    results = []
    for vt, by, fused, ctas in itertools.product(VECTOR_ACCUMULATORS, THREADS_PER_COLUMN, (False, True),
                                                 sorted({1, max(1, expected_ctas - 1), expected_ctas,
                                                         expected_ctas + 1})):
        if fused and dtype != torch.float32:
            continue  # identical to the unfused order: the square of a 16-bit value is exact
        if by * ctas > shape[1]:
            continue
        mismatches = int((emulated_norm(columns, vt, by, fused, ctas) != aten).sum())
        results.append((mismatches, vt, by, fused, ctas))

    def name(vt: int, by: int, fused: bool, ctas: int) -> str:
        return f"vt={vt} by={by}{' fma' if fused else ''}{f' ctas={ctas}' if ctas > 1 else ''}"

    exact = [name(*candidate) for m, *candidate in results if m == 0]
    split = f" (ATen's ctas: {expected_ctas})" if expected_ctas > 1 else ""
    if exact:
        return "matches " + ", ".join(exact) + split
    m, *closest = min(results)
    return f"no match; closest {name(*closest)}: {m} of {aten.numel()} columns differ{split}"


def main() -> None:
    print(torch.__version__, torch.cuda.get_device_name(), flush=True)
    for shape, dtype, layout in itertools.product(NORM_SHAPES, (torch.bfloat16, torch.float32),
                                                  ("contiguous", "frame-major", "channels-last")):
        print(f"{str(shape):24} {str(dtype):15} {layout:13} {probe(shape, dtype, layout)}", flush=True)


if __name__ == "__main__":
    main()
