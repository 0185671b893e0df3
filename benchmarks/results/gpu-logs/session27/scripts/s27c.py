"""Session 27 C: FUSED_SHORTCUT_BIASES on and off, interleaved (wall medians of 5 each) and one profiled decode
each (total kernel time, and the kernels that differ), Wan2.2 and Wan2.1 bf16 480x832x81; then the full
kernel/op table of the default decode (Wan2.2), to list every non-conv pass."""
import argparse, collections, statistics, sys, time, torch
import torch_wanops
from torch_wanops import decoder as dec
from torch_wanops.bench import decode_case
sys.path.insert(0, "benchmarks")
from profile_decode import kernel_table, op_table

print(torch.__version__, torch.cuda.get_device_name(), flush=True)

def kernels(prof):
    totals = collections.defaultdict(float)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            totals[e.name[:70]] += e.device_time_total / 1e6
    return totals

for model in ("wan2.2", "wan2.1"):
    vae, z = decode_case(argparse.Namespace(model=model, dtype="bf16", size="480x832", frames=81), "cuda")
    torch_wanops.apply_to(vae)
    ref = None
    times = {True: [], False: []}
    with torch.no_grad():
        for flag in (True, False):
            dec.FUSED_SHORTCUT_BIASES = flag
            out = vae.decode(z).sample
            ref = out if ref is None else ref
            assert torch.equal(out, ref)
        del out
        for _ in range(5):
            for flag in (True, False):
                dec.FUSED_SHORTCUT_BIASES = flag
                torch.cuda.synchronize(); t = time.perf_counter()
                vae.decode(z)
                torch.cuda.synchronize(); times[flag].append(time.perf_counter() - t)
        tables = {}
        for flag in (True, False):
            dec.FUSED_SHORTCUT_BIASES = flag
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                vae.decode(z); torch.cuda.synchronize()
            tables[flag] = kernels(prof)
    for flag in (True, False):
        print(f"{model} FUSED_SHORTCUT_BIASES={flag}: median {statistics.median(times[flag]):.4f} s "
              f"{[round(t, 4) for t in times[flag]]}, kernels {sum(tables[flag].values()):.4f} s", flush=True)
    for name in sorted(set(tables[True]) | set(tables[False])):
        on, off = tables[True].get(name, 0.0), tables[False].get(name, 0.0)
        if abs(on - off) > 2e-4:
            print(f"  {on:8.4f} on {off:8.4f} off  {name}", flush=True)
    dec.FUSED_SHORTCUT_BIASES = True
    if model == "wan2.2":
        with torch.no_grad():
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                        record_shapes=True) as prof:
                vae.decode(z); torch.cuda.synchronize()
        _, lines = kernel_table(prof, 80)
        lines += op_table(prof, 150)
        with open(sys.argv[1], "w") as f:
            f.write("# wan2.2 bf16 480x832x81 wanops-eager (FUSED_SHORTCUT_BIASES on), all kernels and ops\n"
                    + "\n".join(lines) + "\n")
    del vae, z
    torch.cuda.empty_cache()
