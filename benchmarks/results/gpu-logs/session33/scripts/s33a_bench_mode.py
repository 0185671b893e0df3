"""Session 33 A: does cuDNN's benchmark mode find a faster kernel with stock's bits for the decoder's convs?

Per conv geometry of the bf16 480x832 decodes (from the wanops-eager profiles): the stock call (NCDHW input,
contiguous weight, heuristics), the decoder's lever call (channels-last input and weight, heuristics) and the
lever call in benchmark mode (every algorithm tried). Prints whether each output equals stock's, GPU times
(median of CUDA-event timings) and the kernel each runs.
"""
import statistics
import sys

import torch
import torch.nn.functional as F

GEOMS = [  # (input shape, weight shape, padding)
    ((1, 256, 6, 242, 418), (256, 256, 3, 3, 3), 0),
    ((1, 512, 6, 122, 210), (512, 512, 3, 3, 3), 0),
    ((1, 1024, 4, 62, 106), (1024, 1024, 3, 3, 3), 0),
    ((1, 1024, 12, 62, 106), (1024, 1024, 3, 3, 3), 0),
    ((1, 512, 6, 242, 418), (256, 512, 3, 3, 3), 0),
    ((1, 1024, 6, 122, 210), (512, 1024, 3, 3, 3), 0),
    ((4, 512, 240, 416), (512, 512, 3, 3), 1),
    ((4, 1024, 120, 208), (1024, 1024, 3, 3), 1),
    ((1, 1024, 7, 32, 54), (1024, 1024, 3, 3, 3), 0),
    ((1, 1024, 4, 60, 104), (2048, 1024, 3, 1, 1), 0),
    ((1, 1024, 12, 60, 104), (2048, 1024, 3, 1, 1), 0),
    ((2, 1024, 60, 104), (1024, 1024, 3, 3), 1),
    ((10, 1024, 60, 104), (1024, 1024, 3, 3), 1),
    # Wan2.1
    ((1, 192, 6, 242, 418), (192, 192, 3, 3, 3), 0),
    ((1, 384, 4, 122, 210), (384, 384, 3, 3, 3), 0),
    ((1, 384, 7, 62, 106), (384, 384, 3, 3, 3), 0),
    ((4, 192, 480, 832), (96, 192, 3, 3), 1),
    ((4, 384, 240, 416), (192, 384, 3, 3), 1),
    ((1, 192, 4, 122, 210), (384, 192, 3, 3, 3), 0),
]


def conv(x, w, padding):
    return (F.conv3d if x.dim() == 5 else F.conv2d)(x, w, None, 1, padding)


def gpu_ms(fn, reps=10):
    fn(); torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def kernels(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn(); torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return [n[:110] for n in names if "Memset" not in n]


def main():
    torch.backends.cudnn.benchmark_limit = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    gen = torch.Generator("cuda").manual_seed(0)
    print(torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
    total_h = total_b = 0.0
    for xs, ws, pad in GEOMS:
        x = torch.randn(xs, device="cuda", dtype=torch.bfloat16, generator=gen)
        w = (torch.randn(ws, device="cuda", dtype=torch.bfloat16, generator=gen) / (ws[1] * 9) ** 0.5)
        fmt = torch.channels_last_3d if x.dim() == 5 else torch.channels_last
        xl, wl = x.contiguous(memory_format=fmt), w.contiguous(memory_format=fmt)
        with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=False, allow_tf32=True):
            ref = conv(x, w, pad)
            lever = conv(xl, wl, pad)
            t_h = gpu_ms(lambda: conv(xl, wl, pad))
            k_h = kernels(lambda: conv(xl, wl, pad))
        with torch.backends.cudnn.flags(enabled=True, benchmark=True, deterministic=False, allow_tf32=True):
            bench = conv(xl, wl, pad)
            t_b = gpu_ms(lambda: conv(xl, wl, pad))
            k_b = kernels(lambda: conv(xl, wl, pad))
        total_h += t_h; total_b += t_b
        print(f"{xs} x {ws}: lever==stock {torch.equal(lever, ref)} bench==stock {torch.equal(bench, ref)} "
              f"heur {t_h:.3f} ms bench {t_b:.3f} ms ({t_h / t_b:.3f}x)", flush=True)
        print(f"   heur:  {k_h}\n   bench: {k_b}", flush=True)
        del x, w, xl, wl, ref, lever, bench
        torch.cuda.empty_cache()
    print(f"sum heur {total_h:.3f} ms bench {total_b:.3f} ms")


if __name__ == "__main__":
    main()
