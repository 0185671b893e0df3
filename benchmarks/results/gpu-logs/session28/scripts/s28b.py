"""Session 28 B: where a cold first decode's time goes. With an empty Triton cache, every Triton compile is
timed (triton.compiler.compile wrapped before the first launch) during a first Wan2.2 bf16 480x832x81 decode,
then a first Wan2.1 one in the same process; per kernel: how many variants compiled, their seconds, and which
arguments' specialisations told the variants apart."""
import argparse, collections, os, sys, time
assert not os.listdir(os.environ["TRITON_CACHE_DIR"]) if os.path.isdir(os.environ["TRITON_CACHE_DIR"]) else True
import torch, triton, triton.compiler
import torch_wanops
from torch_wanops.bench import decode_case

compiles = []
original = triton.compiler.compile

def timed_compile(src, *args, **kwargs):
    t = time.perf_counter()
    kernel = original(src, *args, **kwargs)
    name = getattr(getattr(src, "fn", None), "__name__", str(src)[:40])
    names = getattr(getattr(src, "fn", None), "arg_names", [])
    label = lambda k: names[k[0]] if isinstance(k, tuple) and len(k) == 1 and k[0] < len(names) else k
    constants = {label(k): v for k, v in getattr(src, "constants", {}).items()}
    attrs = {label(k): v for k, v in (getattr(src, "attrs", None) or {}).items()}
    compiles.append((name, time.perf_counter() - t, repr(constants)[:400], repr(attrs)[:400]))
    return kernel

triton.compiler.compile = timed_compile
print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
for model in ("wan2.2", "wan2.1"):
    vae, z = decode_case(argparse.Namespace(model=model, dtype="bf16", size="480x832", frames=81), "cuda")
    torch_wanops.apply_to(vae)
    with torch.no_grad():
        for call in ("first", "second"):
            start = len(compiles)
            torch.cuda.synchronize(); t = time.perf_counter()
            vae.decode(z)
            torch.cuda.synchronize(); wall = time.perf_counter() - t
            mine = compiles[start:]
            print(f"{model} {call} decode {wall:.2f} s: {len(mine)} compiles, {sum(c[1] for c in mine):.2f} s", flush=True)
            by_kernel = collections.defaultdict(list)
            for c in mine:
                by_kernel[c[0]].append(c)
            for name, cs in sorted(by_kernel.items(), key=lambda kv: -sum(c[1] for c in kv[1])):
                print(f"  {name}: {len(cs)} variants, {sum(c[1] for c in cs):.2f} s", flush=True)
                for c in cs:
                    print(f"    {c[1]:.2f} s constants={c[2]} attrs={c[3]}", flush=True)
    del vae, z
    torch.cuda.empty_cache()
