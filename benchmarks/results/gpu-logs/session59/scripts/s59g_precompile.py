"""Session 59 G: what a parallel precompile would give a cold first decode (a prototype, not the package's code).

    python s59g_precompile.py record LIST   # one process, its own empty Triton cache: a first decode, every
                                            # kernel specialisation it compiles written to LIST (Triton's
                                            # jit_post_compile_hook hands each one's specialization_data)
    python s59g_precompile.py replay LIST   # a new process, another empty cache: LIST compiled by a pool of
                                            # worker processes (JITFunction.preload, then the launcher's build),
                                            # then a first decode, which finds them in the cache

Wan2.2 bf16 480x832x81, a second decode after the first in each."""
import argparse, concurrent.futures, importlib, json, multiprocessing, os, sys, time

MODEL = "wan2.2"


def decode_twice(label):
    import torch, torch_wanops
    from torch_wanops.bench import decode_case
    vae, z = decode_case(argparse.Namespace(model=MODEL, dtype="bf16", size="480x832", frames=81), "cuda")
    torch_wanops.apply_to(vae)
    with torch.no_grad():
        for call in ("first", "second"):
            torch.cuda.synchronize(); start = time.perf_counter()
            vae.decode(z)
            torch.cuda.synchronize()
            print(f"{label}: {call} decode {time.perf_counter() - start:.2f} s", flush=True)


def record(path):
    from triton import knobs
    recorded = []

    def hook(*, fn, compile, **_):
        recorded.append({"module": fn.module, "name": fn.name, "data": compile["specialization_data"]})

    knobs.runtime.jit_post_compile_hook = hook
    decode_twice("record")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(recorded, f)
    print(f"record: {len(recorded)} specialisations", flush=True)


def compile_one(entry):
    start = time.perf_counter()
    kernel = getattr(importlib.import_module(entry["module"]), entry["name"])
    compiled = kernel.preload(entry["data"])
    compiled._init_handles()  # the launcher's build, cached on disk too
    return time.perf_counter() - start


def replay(path, workers):
    with open(path, encoding="utf-8") as f:
        entries = json.load(f)
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(workers, mp_context=context) as pool:
        seconds = list(pool.map(compile_one, entries))
    print(f"replay: {len(entries)} specialisations by {workers} processes in {time.perf_counter() - start:.2f} s "
          f"(each {min(seconds):.2f}-{max(seconds):.2f} s, {sum(seconds):.1f} s in all, imports included)", flush=True)
    decode_twice("replay")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("phase", choices=("record", "replay"))
    parser.add_argument("path")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    args = parser.parse_args()
    sys.path.insert(0, os.getcwd())
    record(args.path) if args.phase == "record" else replay(args.path, args.workers)
