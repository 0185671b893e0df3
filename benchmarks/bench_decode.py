"""End-to-end Wan VAE decode: stock vs torch_wanops, eager and compiled, side by side (CUDA).

Each configuration decodes the same seeded latents with every variant in one process
and checks bit-exactness against stock eager (torch_wanops.bench.run_bench). Results
accumulate in results/decode.json (keyed by configuration, so runs can be split) and
are rendered to decode.md (and decode.png with --plot).

    python benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 fp32 \
        --sizes 480x832 720x1280 --compile-cases bf16:480x832
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import LEVER_SWITCHES, BenchConfig, format_table, plot, run_bench  # noqa: E402

# The timing of results from before run_bench said how it timed (session 46 and earlier).
EARLIER_TIMING = "each variant's decodes in turn"


def key(result) -> str:
    s = result["shape"]
    autocast = " under autocast" if result.get("autocast") else ""
    return f"{result['model']} {result['dtype']} {s['height']}x{s['width']}x{s['frames']}{autocast}"


def render(results: list[dict]) -> str:
    first = results[0]
    repeats = " or ".join(str(n) for n in sorted({result["repeat"] for result in results}))
    timings = {key(result): result.get("timing", EARLIER_TIMING) for result in results}
    per_case = len(set(timings.values())) > 1
    timing = "timed per case as listed below" if per_case else next(iter(timings.values()))
    lines = [
        "# Wan VAE decode: stock diffusers vs torch_wanops",
        "",
        f"{first['device']}, torch {first['torch']}, triton {first['triton']}, diffusers {first['diffusers']}; "
        f"random seeded weights; median of {repeats} decodes (each case's in decode.json) after a warm-up, {timing}; "
        "speedup over diffusers eager; "
        "peak = max allocated minus allocated before; bit-exact = torch.equal with diffusers eager.",
        "",
        "| case | variant | median s | speedup | bit-exact | peak GiB | first call s | max abs diff / PSNR |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for result in results:
        for row in result["rows"]:
            exact = "reference" if row["bit_exact"] is None else ("yes" if row["bit_exact"] else "no")
            peak = "-" if row["peak_bytes"] is None else f"{row['peak_bytes'] / 2**30:.2f}"
            diff = "" if row["bit_exact"] in (None, True) else f"{row['max_abs_diff']:.3g} / {row['psnr_db']:.1f} dB"
            lines.append(f"| {key(result)} | {row['variant']} | {row['median_s']:.3f} | {row['speedup']:.2f}x | "
                         f"{exact} | {peak} | {row['first_call_s']:.1f} | {diff} |")
    refused = [f"- {key(result)}: {geometry}" for result in results for geometry in result.get("conv_layout_refused", ())]
    if refused:  # each costs cuDNN's transposes and a copy of its input (decoder.refused_conv_geometries)
        lines += ["", "Conv geometries the conv-layout check refused (they keep stock's layout), per case:", *refused]
    if per_case:
        lines += ["", "Timing, per case:", *(f"- {case}: {text}" for case, text in timings.items())]
    codes = [f"- {key(result)}: {result['code']}" for result in results if "code" in result]
    if codes:  # a matrix whose cells were measured on different code says which
        lines += ["", "Code measured, per case:", *codes]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["wan2.1", "wan2.2"])
    parser.add_argument("--dtypes", nargs="+", default=["bf16", "fp32"])
    parser.add_argument("--sizes", nargs="+", default=["480x832", "720x1280"])
    parser.add_argument("--frames", type=int, default=81)
    parser.add_argument("--compile-cases", nargs="*", default=["bf16:480x832"],
                        help="dtype:HxW cases that also run the two compiled variants")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--autocast", action="store_true",
                        help="decode under torch.autocast to the VAE's dtype (16-bit only), as serving engines do")
    for lever, (module, switch, value) in LEVER_SWITCHES.items():  # --stock-conv-layout, --computed-silu, ...
        parser.add_argument(f"--{lever.removeprefix('wanops-eager-')}", dest="levers", action="append_const",
                            const=lever, help=f"also time wanops eager with {module or 'the decoder'}.{switch}={value}")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--plot", action="store_true", help="also write decode.png (needs matplotlib)")
    parser.add_argument("--render-only", action="store_true", help="re-render decode.md/png from decode.json")
    args = parser.parse_args()

    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "decode.json")
    store = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            store = {key(r): r for r in json.load(handle)}
    if not args.render_only:
        for model in args.models:
            for dtype in args.dtypes:
                for size in args.sizes:
                    height, width = (int(v) for v in size.split("x"))
                    config = BenchConfig(model=model, dtype=dtype, height=height, width=width, frames=args.frames,
                                         device="cuda", compile=f"{dtype}:{size}" in args.compile_cases,
                                         repeat=args.repeat, levers=tuple(args.levers or ()),
                                         autocast=args.autocast)
                    result = run_bench(config, progress=lambda message: print("  ", message, flush=True))
                    print(key(result), "\n" + format_table(result), flush=True)
                    store[key(result)] = result
                    with open(path, "w", encoding="utf-8") as handle:
                        json.dump(list(store.values()), handle, indent=2)
    results = list(store.values())
    with open(os.path.join(args.out, "decode.md"), "w", encoding="utf-8") as handle:
        handle.write(render(results))
    if args.plot:
        plot(results, os.path.join(args.out, "decode.png"))


if __name__ == "__main__":
    main()
