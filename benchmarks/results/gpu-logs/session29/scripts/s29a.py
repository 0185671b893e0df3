"""Session 29 A: where a cold first decode's time goes. With an empty Triton cache, an exclusive timer
(nested timed calls subtracted from their callers) over Triton's compile, its per-kernel load (launcher
and module: CompiledKernel._init_handles), the profiler's start/stop, the decoder's conv checks and the
op's channel-norm order check; the remainder of the first decode's wall time is everything else (cuDNN's
first calls outside checks, Python, the decode itself). Wan2.2 bf16 480x832x81, then Wan2.1 in the same
process; each decoded twice."""
import argparse, collections, functools, os, sys, time
import torch, triton, triton.compiler, triton.compiler.compiler as tcc
import torch_wanops
from torch_wanops import decoder as D
import importlib
from torch_wanops.bench import decode_case

R = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")  # the package re-exports the op over the name

own = collections.Counter(); calls = collections.Counter(); stack = []

def timed(label, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        stack.append(0.0)
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            total = time.perf_counter() - t
            nested = stack.pop()
            own[label] += total - nested
            calls[label] += 1
            if stack:
                stack[-1] += total
    return wrapper

triton.compiler.compile = timed("triton compile", triton.compiler.compile)
tcc.compile = triton.compiler.compile
tcc.CompiledKernel._init_handles = timed("triton load (launcher, module)", tcc.CompiledKernel._init_handles)
torch.profiler.profile.start = timed("profiler start", torch.profiler.profile.start)
torch.profiler.profile.stop = timed("profiler stop", torch.profiler.profile.stop)
torch.profiler.profile.events = timed("profiler events", torch.profiler.profile.events)
for name in ("_lever_gives_stock_bits", "_chunked_conv_gives_stock_bits", "_conv_kernels", "_runs_faster",
             "_tail_split_giving"):
    setattr(D, name, timed(f"decoder.{name}", getattr(D, name)))
R.kernel_norm_is_atens = timed("channel-norm order check", R.kernel_norm_is_atens)
R.silu_table = timed("silu table", R.silu_table)

print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), torch.backends.cudnn.version(), flush=True)
for model in ("wan2.2", "wan2.1"):
    vae, z = decode_case(argparse.Namespace(model=model, dtype="bf16", size="480x832", frames=81), "cuda")
    torch_wanops.apply_to(vae)
    with torch.no_grad():
        for call in ("first", "second"):
            own.clear(); calls.clear()
            torch.cuda.synchronize(); t = time.perf_counter()
            vae.decode(z)
            torch.cuda.synchronize(); wall = time.perf_counter() - t
            print(f"{model} {call} decode {wall:.2f} s", flush=True)
            for label, seconds in sorted(own.items(), key=lambda kv: -kv[1]):
                print(f"  {seconds:7.2f} s {calls[label]:6d} calls  {label}", flush=True)
            print(f"  {wall - sum(own.values()):7.2f} s  the rest", flush=True)
    del vae, z
    torch.cuda.empty_cache()
