"""Session 41 probe: can a whole wanops decode be captured as one CUDA graph, are its replays stock's bits, how fast."""
import argparse, statistics, time, traceback, sys, os
import torch
sys.path.insert(0, os.getcwd())
import torch_wanops
from torch_wanops.bench import decode_case

p = argparse.ArgumentParser()
p.add_argument("--model", default="wan2.2"); p.add_argument("--dtype", default="bf16")
p.add_argument("--size", default="480x832"); p.add_argument("--frames", type=int, default=81)
p.add_argument("--repeats", type=int, default=7)
p.add_argument("--profile", action="store_true")
args = p.parse_args()
vae, z = decode_case(args, "cuda")
print(args.model, args.dtype, args.size, torch.cuda.get_device_name(), torch.__version__, flush=True)

def decode(latents):
    with torch.no_grad():
        return vae.decode(latents, return_dict=False)[0]

def wall(fn):
    torch.cuda.synchronize(); t = time.perf_counter(); out = fn(); torch.cuda.synchronize()
    return out, time.perf_counter() - t

torch_wanops.restore(vae)
ref = decode(z); decode(z)
torch_wanops.apply_to(vae)
for _ in range(2):
    eager = decode(z)
print("eager exact", torch.equal(eager, ref), flush=True)
del eager
torch.cuda.synchronize(); torch.cuda.empty_cache()
alloc0, res0 = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
torch.cuda.reset_peak_memory_stats()
static_z = z.clone()
graph = torch.cuda.CUDAGraph()
try:
    t = time.perf_counter()
    with torch.cuda.graph(graph):
        static_out = decode(static_z)
    torch.cuda.synchronize()
    print(f"captured in {time.perf_counter() - t:.2f} s; allocated +{(torch.cuda.memory_allocated() - alloc0) / 2**30:.2f} GiB, "
          f"reserved +{(torch.cuda.memory_reserved() - res0) / 2**30:.2f} GiB, peak +{(torch.cuda.max_memory_allocated() - alloc0) / 2**30:.2f} GiB", flush=True)
except Exception:
    traceback.print_exc(); sys.exit(1)
graph.replay(); torch.cuda.synchronize()
print("replay exact", torch.equal(static_out, ref), static_out.stride() == ref.stride(), flush=True)
z2 = torch.randn_like(z)
torch_wanops.restore(vae); ref2 = decode(z2); torch_wanops.apply_to(vae)
static_z.copy_(z2); graph.replay(); torch.cuda.synchronize()
print("replay exact, other latents", torch.equal(static_out, ref2), flush=True)
del ref2
def graphed():
    static_z.copy_(z); graph.replay(); return static_out.clone()
times = {"stock": [], "eager": [], "graphed": []}
for _ in range(args.repeats):
    torch_wanops.restore(vae); times["stock"].append(wall(lambda: decode(z))[1]); torch_wanops.apply_to(vae)
    times["eager"].append(wall(lambda: decode(z))[1])
    out, s = wall(graphed); times["graphed"].append(s)
print("graphed exact", torch.equal(out, ref), flush=True)
med = {k: statistics.median(v) for k, v in times.items()}
for k, v in times.items():
    print(f"{k}: median {med[k]:.4f} s ({med['stock'] / med[k]:.3f}x)  runs {' '.join(f'{x:.4f}' for x in v)}", flush=True)

if args.profile:
    sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
    from idle_gaps import idle_gaps
    for name, fn in (("eager", lambda: decode(z)), ("graphed", graphed)):
        fn(); torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn(); torch.cuda.synchronize()
        kernels = [(e.time_range.start, e.time_range.end, e.name) for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA]
        span, gaps = idle_gaps(kernels)
        busy = sum(end - start for start, end, _ in kernels)
        bins = [0.0] * 10
        for gap in gaps:
            bins[min(9, int(10 * gap.at_us / span))] += gap.us
        print(f"{name}: {len(kernels)} kernels/copies, their time {busy / 1e6:.4f} s, span {span / 1e6:.4f} s, "
              f"idle {sum(g.us for g in gaps) / 1e6:.4f} s in {len(gaps)} gaps; idle per tenth (ms) "
              + " ".join(f"{b / 1e3:.2f}" for b in bins), flush=True)
