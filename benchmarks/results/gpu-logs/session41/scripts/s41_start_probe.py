"""Session 41 probe: what the CPU does in the first milliseconds of a warm wanops decode (CPU ops and GPU kernels)."""
import argparse, os, sys
import torch
sys.path.insert(0, os.getcwd())
from torch_wanops.bench import add_decode_case_arguments, warm_cuda_decodes, describe_cuda_case
p = argparse.ArgumentParser(); add_decode_case_arguments(p)
p.add_argument("--until-ms", type=float, default=4.0); p.add_argument("--min-us", type=float, default=15.0)
args = p.parse_args()
print(describe_cuda_case(args))
for name, decode in warm_cuda_decodes(args, ["wanops-eager"]):
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as prof:
        with torch.profiler.record_function("DECODE"):
            decode()
        torch.cuda.synchronize()
    events = prof.events()
    t0 = min(e.time_range.start for e in events if e.name == "DECODE")
    rows = []
    for e in events:
        start = e.time_range.start - t0
        dur = e.time_range.end - e.time_range.start
        if 0 <= start <= args.until_ms * 1e3 and (dur >= args.min_us or e.device_type == torch.autograd.DeviceType.CUDA):
            kind = "GPU" if e.device_type == torch.autograd.DeviceType.CUDA else "cpu"
            rows.append((start, kind, dur, e.name[:90]))
    for start, kind, dur, ename in sorted(rows):
        print(f"{start:9.1f} us {kind} {dur:8.1f} us  {ename}")
