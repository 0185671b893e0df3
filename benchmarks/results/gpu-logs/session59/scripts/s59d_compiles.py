"""Session 59 D: which Triton kernels a cold first decode compiles, and what tells their variants apart. With an
empty Triton cache, every `triton.compiler.compile` call is logged with its kernel's name, its seconds, its
constexprs and its specialization attributes (divisibility by 16, values of 1); per kernel a count and a total.
Wan2.2 bf16 480x832x81 (session 29 counted 39 compiles, 9.84 s; session 59's B 52, 18.91 s), then Wan2.1."""
import argparse, collections, time
import torch, triton.compiler, triton.compiler.compiler as tcc
import torch_wanops
from torch_wanops.bench import decode_case

seconds = collections.Counter(); count = collections.Counter()
original = triton.compiler.compile


def logged_compile(src, *args, **kwargs):
    start = time.perf_counter()
    try:
        return original(src, *args, **kwargs)
    finally:
        took = time.perf_counter() - start
        name = getattr(src, "name", type(src).__name__)
        seconds[name] += took; count[name] += 1
        fn = getattr(src, "fn", None)
        arg_names = getattr(fn, "arg_names", [])
        constants = {arg_names[k[0]] if isinstance(k, tuple) and len(k) == 1 and k[0] < len(arg_names) else k: v
                     for k, v in getattr(src, "constants", {}).items()}
        attrs = {arg_names[k[0]] if isinstance(k, tuple) and len(k) == 1 and k[0] < len(arg_names) else k: v
                 for k, v in getattr(src, "attrs", {}).items()}
        print(f"compile {took:6.2f} s  {name}  constexprs {constants}  attrs {attrs}", flush=True)


triton.compiler.compile = tcc.compile = logged_compile
print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
for model in ("wan2.2", "wan2.1"):
    seconds.clear(); count.clear()
    vae, z = decode_case(argparse.Namespace(model=model, dtype="bf16", size="480x832", frames=81), "cuda")
    torch_wanops.apply_to(vae)
    with torch.no_grad():
        torch.cuda.synchronize(); start = time.perf_counter()
        vae.decode(z)
        torch.cuda.synchronize()
    print(f"{model} first decode {time.perf_counter() - start:.2f} s; compiles per kernel:", flush=True)
    for name, total in sorted(seconds.items(), key=lambda kv: -kv[1]):
        print(f"  {total:7.2f} s {count[name]:4d}  {name}", flush=True)
    del vae, z
    torch.cuda.empty_cache()
