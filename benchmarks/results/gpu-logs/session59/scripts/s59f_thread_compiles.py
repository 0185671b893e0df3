"""Session 59 F (CPU, no GPU): do Triton compiles of the decoder's kernels overlap in threads? The fused norm
kernel's launches at a few decoder geometries are recorded on meta tensors (count_sass.py's recorder) and their
specialisations compiled for sm_90 with Triton's own ptxas: once one after another, once by a thread pool of
--threads workers, each time into an empty Triton cache. A first decode on a fresh machine compiles ~50 such
variants one after another (session 59 D: 19 s on an H100's host)."""
import argparse, concurrent.futures, os, sys, tempfile, time
import torch
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "benchmarks"))
import count_sass as cs  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--threads", type=int, default=os.cpu_count())
args = parser.parse_args()

launches = []
for channels, size in ((256, (240, 416)), (512, (120, 208)), (1024, (60, 104)), (96, (480, 832))):
    meta = dict(dtype=torch.bfloat16, device="meta")
    shape, padding = (1, channels, 4, *size), (1, 1, 1, 1, 2, 0)
    gamma, table = torch.empty(channels, 1, 1, 1, **meta), torch.empty(1 << 16, **meta)
    norm = torch.empty(1, 1, 4, *size, dtype=torch.float32, device="meta")
    for layout, bias in ((torch.channels_last_3d, torch.empty(channels, **meta)), (torch.contiguous_format, None)):
        x = torch.empty(shape, **meta).contiguous(memory_format=layout)
        cache = torch.empty(1, channels, 2, *size, **meta).contiguous(memory_format=layout)
        strides = cs.cat_pad.cat_pad_5d_out_strides(x, cache, padding, True)
        launch, kernels = cs.RecordedLaunch(), cs.cat_pad._kernels
        cs.cat_pad._kernels = launch
        try:
            cs.cat_pad.launch_cat_pad_5d(x, cache, padding, 2, strides,
                                         cs.cat_pad.NormPrologue(norm, gamma, channels ** 0.5, True, table, bias))
        finally:
            cs.cat_pad._kernels = kernels
        launches.append(launch)

import triton  # noqa: E402
print(f"triton {triton.__version__}, {len(launches)} launches, {args.threads} threads, {os.cpu_count()} cpus")
for label, workers in (("warm-up, one after another", 0), ("one after another", 0), (f"{args.threads} threads", args.threads),
                       ("one after another", 0)):
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp()
    start = time.perf_counter()
    if workers:
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            list(pool.map(cs.compile_recorded, launches))
    else:
        for launch in launches:
            cs.compile_recorded(launch)
    print(f"{label}: {time.perf_counter() - start:.2f} s", flush=True)
