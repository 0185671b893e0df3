"""Per-op microbenchmark at the Wan decoder's real shapes (CUDA).

For each case: median time (triton.testing.do_bench) of the wanops op, of the eager
torch reference expression and of torch.compile of that expression; GB/s counting
the bytes the op must read and write; and that bandwidth as a fraction of a plain
device-to-device copy measured in the same run.

    python benchmarks/bench_ops.py --out benchmarks/results
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402
from torch_wanops.bench import environment  # noqa: E402
from torch_wanops.ops.bias_add_contiguous import bias_add_contiguous_reference  # noqa: E402
from torch_wanops.ops.cat_pad_5d import cat_pad_5d_outputs_reference  # noqa: E402
from torch_wanops.ops.dup_up3d_add import dup_up3d_add_reference  # noqa: E402
from torch_wanops.ops.rms_norm_cat_pad_5d import rms_norm_silu_reference  # noqa: E402
from torch_wanops.ops.upsample_nearest_2x import upsample_nearest_2x_reference  # noqa: E402

# (label, channels, frames, height, width, cache frames, padding): Wan2.1 480x832, a later chunk.
CAT_PAD_CASES = [
    ("conv_in 16ch 60x104", 16, 1, 60, 104, 2, (1, 1, 1, 1, 2, 0)),
    ("mid 384ch 60x104", 384, 1, 60, 104, 2, (1, 1, 1, 1, 2, 0)),
    ("time_conv 384ch 60x104", 384, 1, 60, 104, 2, (0, 0, 0, 0, 2, 0)),
    ("up1 384ch 2f 120x208", 384, 2, 120, 208, 2, (1, 1, 1, 1, 2, 0)),
    ("up2 192ch 4f 240x416", 192, 4, 240, 416, 2, (1, 1, 1, 1, 2, 0)),
    ("up3 96ch 4f 480x832", 96, 4, 480, 832, 2, (1, 1, 1, 1, 2, 0)),
]
# (label, in channels, out channels, factor_t, source frames, height, width): Wan2.2 480x832 shortcuts.
DUP_CASES = [
    ("up0 1024->1024 t2 30x52", 1024, 1024, 2, 1, 30, 52),
    ("up1 1024->1024 t2 60x104", 1024, 1024, 2, 2, 60, 104),
    ("up2 1024->512 t1 120x208", 1024, 512, 1, 4, 120, 208),
]


# Residual-block conv inputs (norm + SiLU + pad): the CAT_PAD_CASES with a norm in front.
NORM_CASES = [case for case in CAT_PAD_CASES if case[0].split()[0] in ("mid", "up1", "up2", "up3")]
# (label, channels, frames, height, width): conv outputs that get their bias added.
BIAS_CASES = [("up3 conv 96ch 4f 480x832", 96, 4, 480, 832), ("up2 conv 192ch 4f 240x416", 192, 4, 240, 416),
              ("mid conv 384ch 60x104", 384, 1, 60, 104)]
# (label, channels, frames, height, width): the upsamplers' inputs (Wan2.1 480x832).
UPSAMPLE_CASES = [("up0 384ch 2f 60x104", 384, 2, 60, 104), ("up1 384ch 4f 120x208", 384, 4, 120, 208),
                  ("up2 192ch 4f 240x416", 192, 4, 240, 416)]
# (label, weight shape): conv weights copied channels-last for a channels-last conv input, every call.
WEIGHT_CASES = [("wan2.2 1024->1024", (1024, 1024, 3, 3, 3)), ("wan2.2 1024->512", (512, 1024, 3, 3, 3)),
                ("wan2.2 time_conv 1024", (2048, 1024, 3, 1, 1)), ("wan2.2 upsampler 512", (512, 512, 3, 3)),
                ("wan2.1 384->384", (384, 384, 3, 3, 3)), ("wan2.1 192->192", (192, 192, 3, 3, 3)),
                ("wan2.1 96->96", (96, 96, 3, 3, 3))]
OPS = ("cat_pad_5d", "rms_norm_cat_pad_5d", "dup_up3d_add", "bias_add_contiguous", "upsample_nearest_2x",
       "channels_last_copy")


def median_ms(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def bench_row(label, op, reference, args, nbytes, copy_gbps):
    compiled = torch.compile(reference, dynamic=False)
    times = {"wanops": median_ms(lambda: op(*args)), "eager": median_ms(lambda: reference(*args)),
             "compiled": median_ms(lambda: compiled(*args))}
    gbps = nbytes / times["wanops"] / 1e6
    return {
        "case": label,
        "median_ms": times["wanops"],
        "eager_ms": times["eager"],
        "compiled_ms": times["compiled"],
        "gbps": gbps,
        "fraction_of_copy": gbps / copy_gbps,
        "speedup_vs_eager": times["eager"] / times["wanops"],
        "speedup_vs_compiled": times["compiled"] / times["wanops"],
    }


def copy_bandwidth_gbps(dtype: torch.dtype, device: str) -> float:
    """The device's copy bandwidth (bytes read + written per second / 1e9), measured with a 2**28-element copy_."""
    src = torch.randn(2**28, device=device, dtype=dtype)
    dst = torch.empty_like(src)
    return 2 * src.numel() * src.element_size() / median_ms(lambda: dst.copy_(src)) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    parser.add_argument("--ops", nargs="+", default=list(OPS), choices=OPS, help="the ops to measure (default: all)")
    args = parser.parse_args()
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    device = "cuda"
    copy_gbps = copy_bandwidth_gbps(dtype, device)

    rows = []
    for layout in ("contiguous", "channels_last"):
        fmt = torch.channels_last_3d if layout == "channels_last" else torch.contiguous_format
        for label, channels, frames, height, width, cache_frames, padding in CAT_PAD_CASES * ("cat_pad_5d" in args.ops):
            x = torch.randn(1, channels, frames, height, width, device=device, dtype=dtype).contiguous(memory_format=fmt)
            cache = torch.randn(1, channels, cache_frames, height, width, device=device, dtype=dtype)
            cache = cache.contiguous(memory_format=fmt)
            out, kept = torch_wanops.cat_pad_5d(x, cache, padding, 2)
            nbytes = (x.numel() + cache.numel() + out.numel() + kept.numel()) * x.element_size()

            def reference(x, cache):
                return cat_pad_5d_outputs_reference(x, cache, padding, 2)

            row = bench_row(f"cat_pad_5d {label}", lambda x, c: torch_wanops.cat_pad_5d(x, c, padding, 2), reference,
                            (x, cache), nbytes, copy_gbps)
            rows.append({"layout": layout, **row})
        for label, channels, frames, height, width, cache_frames, padding in NORM_CASES * ("rms_norm_cat_pad_5d" in args.ops):
            x = torch.randn(1, channels, frames, height, width, device=device, dtype=dtype).contiguous(memory_format=fmt)
            cache = torch.randn(1, channels, cache_frames, height, width, device=device, dtype=dtype)
            cache = cache.contiguous(memory_format=fmt)
            gamma = torch.randn(channels, 1, 1, 1, device=device, dtype=dtype)
            scale = channels**0.5
            out, kept = torch_wanops.rms_norm_cat_pad_5d(x, gamma, scale, True, cache, padding, 2)
            # x is read twice (the channel norm, then the kernel).
            nbytes = (2 * x.numel() + cache.numel() + out.numel() + kept.numel()) * x.element_size()

            def norm_reference(x, cache):
                return cat_pad_5d_outputs_reference(rms_norm_silu_reference(x, gamma, scale, True), cache, padding, 2)

            row = bench_row(f"rms_norm_cat_pad_5d {label}",
                            lambda x, c: torch_wanops.rms_norm_cat_pad_5d(x, gamma, scale, True, c, padding, 2),
                            norm_reference, (x, cache), nbytes, copy_gbps)
            rows.append({"layout": layout, **row})
        for label, cin, cout, factor_t, frames, height, width in DUP_CASES * ("dup_up3d_add" in args.ops):
            repeats = cout * factor_t * 4 // cin
            source = torch.randn(1, cin, frames, height, width, device=device, dtype=dtype).contiguous(memory_format=fmt)
            main_ = torch.randn(1, cout, frames * factor_t, height * 2, width * 2, device=device, dtype=dtype)
            main_ = main_.contiguous(memory_format=fmt)
            nbytes = (2 * main_.numel() + source.numel()) * main_.element_size()
            args_ = (main_, source, factor_t, 2, repeats, False)
            row = bench_row(f"dup_up3d_add {label}", torch_wanops.dup_up3d_add, dup_up3d_add_reference, args_, nbytes,
                            copy_gbps)
            rows.append({"layout": layout, **row})
    for label, channels, frames, height, width in BIAS_CASES * ("bias_add_contiguous" in args.ops):
        # The op's input is a channels-last conv output whatever the decoder's layout; the
        # residual (a block's shortcut) is contiguous, or frame-major after an upsampler.
        shape = (1, channels, frames, height, width)
        x = torch.randn(shape, device=device, dtype=dtype).contiguous(memory_format=torch.channels_last_3d)
        bias = torch.randn(channels, device=device, dtype=dtype)
        for residual_layout in (None, "contiguous", "frame-major"):
            args_, case = (x, bias), f"bias_add_contiguous {label}"
            if residual_layout is not None:
                residual = torch.randn(shape, device=device, dtype=dtype)
                if residual_layout == "frame-major":
                    residual = residual.permute(0, 2, 1, 3, 4).contiguous().permute(0, 2, 1, 3, 4)
                args_, case = (x, bias, residual), f"{case} + {residual_layout} residual"
            nbytes = (2 if residual_layout is None else 3) * x.numel() * x.element_size()  # x (residual) in, out
            row = bench_row(case, torch_wanops.bias_add_contiguous, bias_add_contiguous_reference, args_, nbytes,
                            copy_gbps)
            rows.append({"layout": "channels_last", **row})

    for label, channels, frames, height, width in UPSAMPLE_CASES * ("upsample_nearest_2x" in args.ops):
        # The input is a residual block's output (contiguous); the output, 4x its size, is
        # stock's layout or the channels-last Conv2d input of the conv-layout lever.
        x = torch.randn(1, channels, frames, height, width, device=device, dtype=dtype)
        for channels_last in (False, True):
            nbytes = 5 * x.numel() * x.element_size()  # x in, 4x out
            row = bench_row(f"upsample_nearest_2x {label}", torch_wanops.upsample_nearest_2x,
                            upsample_nearest_2x_reference, (x, channels_last), nbytes, copy_gbps)
            rows.append({"layout": "channels_last" if channels_last else "contiguous", **row})

    for label, shape in WEIGHT_CASES * ("channels_last_copy" in args.ops):
        weight = torch.randn(shape, device=device, dtype=dtype)
        layout = torch.channels_last_3d if weight.dim() == 5 else torch.channels_last
        nbytes = 2 * weight.numel() * weight.element_size()
        row = bench_row(f"channels_last_copy {label} {tuple(shape)}", torch_wanops.channels_last_copy,
                        lambda w: w.contiguous(memory_format=layout), (weight,), nbytes, copy_gbps)
        rows.append({"layout": "contiguous", **row})

    result = {**environment(device), "dtype": args.dtype, "copy_gbps": copy_gbps, "rows": rows}
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "ops.json"), "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
    lines = [
        f"# wanops op microbenchmarks ({args.dtype})",
        "",
        f"{result['device']}, torch {result['torch']}, triton {result['triton']}; "
        f"device copy bandwidth in this run: {copy_gbps:.0f} GB/s (read + write).",
        "",
        "| op / case | layout | wanops ms | GB/s | of copy | eager ms | vs eager | compiled ms | vs compiled |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['case']} | {r['layout']} | {r['median_ms']:.4f} | {r['gbps']:.0f} | {r['fraction_of_copy']:.0%} | "
            f"{r['eager_ms']:.4f} | {r['speedup_vs_eager']:.2f}x | {r['compiled_ms']:.4f} | "
            f"{r['speedup_vs_compiled']:.2f}x |"
        )
    with open(os.path.join(args.out, "ops.md"), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
