"""What is alive at a decode's memory peak: the allocations, by size and by the code that made them (CUDA; CPU with --device cpu).

    python benchmarks/memory_decode.py --model wan2.1 --dtype bf16 --variants diffusers-eager wanops-eager

Records the CUDA caching allocator's history over one decode (after the warm-up decodes: one, or
two for the compiled variants, which compile over two decodes, as the bench warms them up; with --first the first decode,
whose conv-layout checks hold more), replays its alloc/free events to find the moment of the
highest allocated total, and prints the blocks live then with the innermost torch_wanops/diffusers
frame that allocated each; writes the same to memory_<model>_<dtype>_<variant>[_first].txt under
--out. ``--device cpu`` reads the same events from the profiler's allocation events (small sizes:
``--size 128x192 --frames 9``).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

import torch
from torch._C._profiler import _EventType

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops import decoder as decoder_module  # noqa: E402
from torch_wanops.bench import COMPILED_VARIANTS, add_decode_case_arguments, decode_case, variant  # noqa: E402

OWN_CODE = ("torch_wanops", "diffusers")


def allocation_site(frames: list[dict]) -> str:
    """The innermost frame in this project's or diffusers' code (frames are innermost first)."""
    for frame in frames:
        if any(part in frame["filename"] for part in OWN_CODE):
            return f"{os.path.basename(frame['filename'])}:{frame['line']} {frame['name']}"
    return "(outside torch_wanops/diffusers)"


def live_at_peak(trace: list[dict]) -> tuple[int, list[dict]]:
    """(the highest total allocated by the traced events, the blocks live at that moment)."""
    live: dict[int, dict] = {}
    allocated = peak = 0
    at_peak: list[dict] = []
    for event in trace:
        if event["action"] == "alloc":
            live[event["addr"]] = event
            allocated += event["size"]
            if allocated > peak:
                peak, at_peak = allocated, list(live.values())
        elif event["action"] == "free_completed" and event["addr"] in live:
            allocated -= live.pop(event["addr"])["size"]
    return peak, at_peak


def _frame(name: str) -> dict:
    """A profiler event's name ("path(line): function" for Python calls) as a CUDA trace frame."""
    location, _, function = name.partition(": ")
    filename, _, line = location.rpartition("(")
    return {"filename": filename or name, "line": line.rstrip(")"), "name": function}


def cpu_trace(decode) -> list[dict]:
    """decode()'s CPU allocations and frees as the CUDA allocator's trace gives them (addresses,
    sizes, frames innermost first), from the profiler's allocation events."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    with torch.profiler.profile(activities=activities, profile_memory=True, with_stack=True) as prof:
        decode()
    pending = list(prof.profiler.kineto_results.experimental_event_tree())
    allocations = []
    while pending:
        event = pending.pop()
        pending.extend(event.children)
        if event.tag == _EventType.Allocation:
            allocations.append(event)
    trace = []
    for event in sorted(allocations, key=lambda e: e.start_time_ns):
        fields = event.extra_fields
        if fields.alloc_size > 0:
            frames, parent = [], event.parent
            while parent is not None:
                frames.append(_frame(parent.name))
                parent = parent.parent
            trace.append({"action": "alloc", "addr": fields.ptr, "size": fields.alloc_size, "frames": frames})
        else:
            trace.append({"action": "free_completed", "addr": fields.ptr})
    return trace


def report(vae, z: torch.Tensor, name: str, first: bool) -> list[str]:
    on_cuda = z.device.type == "cuda"
    with variant(vae, name), torch.no_grad():
        if first:  # the conv-layout lever's per-geometry checks run again, as in a new process
            decoder_module.clear_conv_verdicts()
        else:  # warm-up: cuDNN plans, Triton compiles, verdicts, and a compiled decoder's two graphs
            for _ in range(2 if name in COMPILED_VARIANTS else 1):
                vae.decode(z, return_dict=False)
        if on_cuda:
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            torch.cuda.memory._record_memory_history(context="alloc", stacks="python", max_entries=500_000)
            vae.decode(z, return_dict=False)
            torch.cuda.synchronize()
            snapshot = torch.cuda.memory._snapshot()
            torch.cuda.memory._record_memory_history(enabled=None)
            trace = snapshot["device_traces"][torch.cuda.current_device()]
        else:
            trace = cpu_trace(lambda: vae.decode(z, return_dict=False))
    peak, blocks = live_at_peak(trace)
    head = f"{name}{' (first decode)' if first else ''}: "
    if on_cuda:
        head += (f"allocated before {base / 2**30:.2f} GiB; max allocated during the decode "
                 f"{(torch.cuda.max_memory_allocated() - base) / 2**30:.2f} GiB above it; ")
    lines = [head + f"{peak / 2**30:.2f} GiB allocated by the decode at its peak, in {len(blocks)} blocks:"]
    by_site: dict[str, list[int]] = collections.defaultdict(list)
    for block in blocks:
        by_site[allocation_site(block["frames"])].append(block["size"])
    for site, sizes in sorted(by_site.items(), key=lambda kv: -sum(kv[1])):
        sizes_mib = ", ".join(f"{s / 2**20:.0f}" for s in sorted(sizes, reverse=True)[:6])
        lines.append(f"  {sum(sizes) / 2**30:6.3f} GiB  {len(sizes):4d} blocks ({sizes_mib} MiB ...)  {site}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--variants", nargs="+", default=["diffusers-eager", "wanops-eager"])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--first", action="store_true",
                        help="record the first decode instead (with the conv-layout checks; no warm-up)")
    args = parser.parse_args()

    vae, z = decode_case(args, args.device)
    os.makedirs(args.out, exist_ok=True)
    for name in args.variants:
        lines = report(vae, z, name, args.first)
        print("\n".join(lines), flush=True)
        path = os.path.join(args.out, f"memory_{args.model}_{args.dtype}_{name}{'_first' if args.first else ''}.txt")
        with open(path, "w", encoding="utf-8") as handle:
            where = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
            handle.write(f"{where}, torch {torch.__version__}, {args.model} {args.dtype} "
                         f"{args.size}x{args.frames}\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
