"""Session 44 probe: Wan2.2 720x1280's refused upsampler Conv2d (4, 512, 360, 640) x (512, 512, 3, 3), bf16.
Which cuDNN kernel stock's NCHW call runs, which the channels-last call runs, and whether channels-last calls on
fewer frames per call (the Conv2d's batch) run stock's kernel and give its bits; times of each (median of 7)."""
import statistics
import torch
import torch.nn.functional as F

torch.manual_seed(0)
dev = "cuda"
for shape in [(4, 512, 360, 640), (4, 512, 240, 416), (1, 512, 360, 640)]:
    n, c, h, w = shape
    x = torch.randn(shape, device=dev, dtype=torch.bfloat16)
    wt = torch.randn(512, c, 3, 3, device=dev, dtype=torch.bfloat16) * 0.02
    x_cl = x.contiguous(memory_format=torch.channels_last)
    wt_cl = wt.contiguous(memory_format=torch.channels_last)

    def stock():
        return F.conv2d(x, wt, padding=1)

    def split(k):
        def run():
            return torch.cat([F.conv2d(x_cl[i:i + k], wt_cl, padding=1) for i in range(0, n, k)])
        return run

    variants = {"stock NCHW": stock}
    for k in sorted({n, 2, 1}, reverse=True):
        if k <= n:
            variants[f"NHWC {k} per call"] = split(k)
    ref = stock()
    for name, fn in variants.items():
        for _ in range(2):
            out = fn()
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        kernels = sorted({e.key[:110] for e in prof.key_averages() if "xmma" in e.key or "conv" in e.key.lower()
                          or "nvjet" in e.key or "gemm" in e.key.lower()})
        times = []
        for _ in range(7):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); fn(); e.record(); torch.cuda.synchronize()
            times.append(s.elapsed_time(e))
        print(f"{shape} {name:18s} equal={torch.equal(out, ref)} median {statistics.median(times):.3f} ms")
        for k in kernels:
            print("    ", k)
