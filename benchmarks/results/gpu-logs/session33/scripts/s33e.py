"""Session 33 E: does ATen's 1024-channel norm add in the block-split order (probe_reduction_order's emulation)?"""
import sys

import torch

sys.path.insert(0, "benchmarks")
from probe_reduction_order import aten_ctas_per_output, emulated_norm  # noqa: E402

props = torch.cuda.get_device_properties(0)
print(torch.__version__, props.name, props.multi_processor_count, props.max_threads_per_multi_processor, flush=True)
for shape in [(1, 1024, 1, 30, 52), (1, 1024, 5, 30, 52), (1, 1024, 2, 60, 104), (1, 1024, 10, 60, 104),
              (1, 1024, 4, 120, 208), (1, 512, 4, 120, 208)]:
    x = (torch.randn(shape, device="cuda", generator=torch.Generator("cuda").manual_seed(0)) * 3).to(torch.bfloat16)
    aten = torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32).reshape(-1)
    columns = x.float().movedim(1, 0).reshape(shape[1], -1)
    expected = aten_ctas_per_output(shape[1], columns.shape[1], props.multi_processor_count,
                                    props.max_threads_per_multi_processor)
    cells = []
    for ctas in sorted({1, max(1, expected - 1), expected, expected + 1, 2 * expected}):
        mismatches = int((emulated_norm(columns, 4, 4, False, ctas) != aten).sum())
        cells.append(f"ctas={ctas}: {mismatches}")
    print(f"{shape} columns {columns.shape[1]} ATen's ctas {expected}: " + ", ".join(cells), flush=True)
