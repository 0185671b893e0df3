"""Session 28 A: how much of a decode's non-conv time two streams could hide. Two independent Wan2.2 bf16
480x832x81 decodes (two VAE copies, same weights, different latents), run one after the other on one stream,
then at once from two threads on two streams; both outputs checked bit for bit against the sequential ones.
If the concurrent pair takes well under twice one decode, a chunk wavefront inside one decode (chunk t+1's
early layers beside chunk t's later ones) is worth building; if not, it is not."""
import argparse, copy, statistics, sys, threading, time, torch
import torch_wanops
from torch_wanops.bench import decode_case

model = sys.argv[1] if len(sys.argv) > 1 else "wan2.2"
print(torch.__version__, torch.cuda.get_device_name(), model, flush=True)
vae, z1 = decode_case(argparse.Namespace(model=model, dtype="bf16", size="480x832", frames=81), "cuda")
torch_wanops.apply_to(vae)
vae2 = copy.deepcopy(vae)
z2 = torch.randn(z1.shape, generator=torch.Generator().manual_seed(1)).to(z1.device, z1.dtype)
pairs = ((vae, z1), (vae2, z2))

with torch.no_grad():
    refs = [v.decode(z).sample for v, z in pairs]
    torch.cuda.synchronize()

    def sequential():
        outs = [v.decode(z).sample for v, z in pairs]
        torch.cuda.synchronize()
        return outs

    def concurrent(priorities):
        streams = [torch.cuda.Stream(priority=p) for p in priorities]
        outs = [None, None]
        barrier = threading.Barrier(2)

        def work(i):
            v, z = pairs[i]
            # Grad mode is per thread: without this the threads would take the reference path and keep autograd graphs.
            with torch.no_grad(), torch.cuda.stream(streams[i]):
                barrier.wait()
                outs[i] = v.decode(z).sample
            streams[i].synchronize()

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads: t.start()
        for t in threads: t.join()
        torch.cuda.synchronize()
        return outs

    runs = {"one decode": lambda: [pairs[0][0].decode(pairs[0][1]).sample, torch.cuda.synchronize()][:1],
            "two, sequential": sequential,
            "two, concurrent": lambda: concurrent((0, 0)),
            "two, concurrent, first stream high priority": lambda: concurrent((-1, 0))}
    times = {name: [] for name in runs}
    for rep in range(4):
        for name, fn in runs.items():
            torch.cuda.synchronize(); t = time.perf_counter()
            outs = fn()
            torch.cuda.synchronize(); dt = time.perf_counter() - t
            exact = all(torch.equal(o, r) for o, r in zip(outs, refs))
            if rep: times[name].append(dt)
            print(f"rep {rep} {name}: {dt:.4f} s exact={exact}", flush=True)
            assert exact, name
            del outs
    for name, ts in times.items():
        print(f"{name}: median {statistics.median(ts):.4f} s {[round(t, 4) for t in ts]}", flush=True)
    one = statistics.median(times["one decode"])
    for name in list(runs)[1:]:
        print(f"{name}: {statistics.median(times[name]) / one:.3f} x one decode", flush=True)
    print(f"peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB", flush=True)
