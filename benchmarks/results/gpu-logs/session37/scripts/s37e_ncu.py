"""Session 37 E: the fused norm at one Wan2.2 bf16 launch (256ch 4f 240x416, first and second norm) and the same
launch as a plain cat_pad_5d copy, each run twice, for ncu."""
import sys
sys.path.insert(0, "benchmarks")
import torch
import decompose_norm_kernel as d
for label, c, f, h, w, raw in d.cases("wan2.2")[:2]:
    x, cache, prologue, strides = d.case_inputs(c, f, h, w, raw, torch.bfloat16)
    for p in (prologue, None):
        for _ in range(2):
            d.run_kernel(x, cache, p, strides)
torch.cuda.synchronize()
