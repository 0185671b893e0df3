"""bf16 Wan2.1 480x832 eager side by side, with the conv check's kernel comparison stubbed (values only) if argv[1] == 'stub'."""
import collections, sys
import torch
from torch_wanops import decoder as D
from torch_wanops.bench import BenchConfig, format_table, run_bench
if sys.argv[1] == "stub":
    D._conv_kernels = lambda conv, x: collections.Counter({"same": 1})
r = run_bench(BenchConfig(model="wan2.1", dtype="bf16", height=480, width=832, frames=81, device="cuda", compile=False, repeat=5))
print(sys.argv[1], "\n" + format_table(r), flush=True)
