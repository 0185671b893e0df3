"""What is alive at a decode's memory peak: the allocations, by size and by the code that made them (CUDA).

    python benchmarks/memory_decode.py --model wan2.1 --dtype bf16 --variants diffusers-eager wanops-eager

Records the CUDA caching allocator's history over one decode (after a warm-up decode; with
--first the first one, whose conv-layout checks hold more), replays its alloc/free events to
find the moment of the highest allocated total, and prints the blocks live then with the
innermost torch_wanops/diffusers frame that allocated each; writes the same to
memory_<model>_<dtype>_<variant>[_first].txt under --out.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops import decoder as decoder_module  # noqa: E402
from torch_wanops.bench import add_decode_case_arguments, decode_case, variant  # noqa: E402

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


def report(vae, z: torch.Tensor, name: str, first: bool) -> list[str]:
    with variant(vae, name), torch.no_grad():
        if first:  # the conv-layout lever's per-geometry checks run again, as in a new process
            decoder_module.clear_conv_verdicts()
        else:
            vae.decode(z, return_dict=False)  # warm-up: cuDNN plans, Triton compiles, verdicts
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        torch.cuda.memory._record_memory_history(context="alloc", stacks="python", max_entries=500_000)
        vae.decode(z, return_dict=False)
        torch.cuda.synchronize()
        snapshot = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
    device = torch.cuda.current_device()
    peak, blocks = live_at_peak(snapshot["device_traces"][device])
    lines = [f"{name}{' (first decode)' if first else ''}: allocated before {base / 2**30:.2f} GiB; max allocated during the decode "
             f"{(torch.cuda.max_memory_allocated() - base) / 2**30:.2f} GiB above it; "
             f"{peak / 2**30:.2f} GiB allocated by the decode at its peak, in {len(blocks)} blocks:"]
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
    parser.add_argument("--first", action="store_true",
                        help="record the first decode instead (with the conv-layout checks; no warm-up)")
    args = parser.parse_args()

    vae, z = decode_case(args, "cuda")
    os.makedirs(args.out, exist_ok=True)
    for name in args.variants:
        lines = report(vae, z, name, args.first)
        print("\n".join(lines), flush=True)
        path = os.path.join(args.out, f"memory_{args.model}_{args.dtype}_{name}{'_first' if args.first else ''}.txt")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, {args.model} {args.dtype} "
                         f"{args.size}x{args.frames}\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
