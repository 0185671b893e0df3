"""Session 59 B: where a cold first decode's time goes today (session 29's s29a.py, with the checks added since:
the latent stage's per-geometry check, the decoder's own reference to the channel-norm order check). An empty
Triton cache; an exclusive timer (nested timed calls subtracted from their callers) over Triton's compiles and
loads, the profiler the checks use, each check; the rest of the wall time is everything else (cuDNN's first
calls outside checks, Python, the decode itself). Wan2.2 bf16 480x832x81, then Wan2.1 in the same process, each
decoded twice. Sessions 42, 43 and 51 took 25-26.5 s for a first Wan2.2 decode against session 29's 17.7 s."""
import argparse, collections, functools, importlib, time
import torch, triton, triton.compiler, triton.compiler.compiler as tcc
import torch_wanops
from torch_wanops import decoder as D
from torch_wanops.bench import decode_case

R = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")
own = collections.Counter(); calls = collections.Counter(); stack = []


def timed(label, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        stack.append(0.0)
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            total = time.perf_counter() - start
            nested = stack.pop()
            own[label] += total - nested
            calls[label] += 1
            if stack:
                stack[-1] += total
    return wrapper


triton.compiler.compile = tcc.compile = timed("triton compile", triton.compiler.compile)
tcc.CompiledKernel._init_handles = timed("triton load (launcher, module)", tcc.CompiledKernel._init_handles)
for name in ("start", "stop", "events"):
    setattr(torch.profiler.profile, name, timed(f"profiler {name}", getattr(torch.profiler.profile, name)))
for name in ("_lever_gives_stock_bits", "_chunked_conv_gives_stock_bits", "_conv_kernels", "_runs_faster",
             "_tail_split_giving", "_checked_latent_stage"):
    setattr(D, name, timed(f"decoder.{name}", getattr(D, name)))
D.kernel_norm_is_atens = R.kernel_norm_is_atens = timed("channel-norm order check", R.kernel_norm_is_atens)
R.silu_table = timed("silu table", R.silu_table)

print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), torch.backends.cudnn.version(), flush=True)
for model in ("wan2.2", "wan2.1"):
    vae, z = decode_case(argparse.Namespace(model=model, dtype="bf16", size="480x832", frames=81), "cuda")
    torch_wanops.apply_to(vae)
    with torch.no_grad():
        for call in ("first", "second"):
            own.clear(); calls.clear()
            torch.cuda.synchronize(); start = time.perf_counter()
            vae.decode(z)
            torch.cuda.synchronize(); wall = time.perf_counter() - start
            print(f"{model} {call} decode {wall:.2f} s", flush=True)
            for label, seconds in sorted(own.items(), key=lambda kv: -kv[1]):
                print(f"  {seconds:7.2f} s {calls[label]:6d} calls  {label}", flush=True)
            print(f"  {wall - sum(own.values()):7.2f} s  the rest", flush=True)
    del vae, z
    torch.cuda.empty_cache()
