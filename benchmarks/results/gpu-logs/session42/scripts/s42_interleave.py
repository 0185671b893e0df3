"""Session 42: a decoder switch's two settings timed interleaved with stock (bf16 480x832x81), each decode checked
against stock, then one profiled decode per setting (kernel time by kernel family).

    python .gpu/s42_interleave.py --model wan2.2 --switch EPILOGUE_NORMS --repeats 7
"""

from __future__ import annotations

import argparse
import collections
import importlib
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402
from torch_wanops.configs import build_vae, latent_shape  # noqa: E402

decoder_module = importlib.import_module("torch_wanops.decoder")


def timed(fn) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - start


def family(name: str) -> str:
    for key in ("bias_add_norm_kernel", "bias_add_contiguous_kernel", "reduce_kernel", "cat_pad_5d_kernel",
                "channel_norm_kernel", "xmma", "conv3d_chunked"):
        if key in name:
            return key
    return "other"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="wan2.2")
    parser.add_argument("--switch", default="EPILOGUE_NORMS")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    dtype = torch.bfloat16
    stock = build_vae(args.model, seed=0, dtype=dtype, device="cuda")
    omni = build_vae(args.model, seed=0, dtype=dtype, device="cuda", vae_class=torch_wanops.OmniAutoencoderKLWan)
    z = torch.randn(latent_shape(args.model, 480, 832, 81), generator=torch.Generator().manual_seed(0))
    z = z.to("cuda", dtype)
    with torch.no_grad():
        expected = stock.decode(z, return_dict=False)[0]
        for flag in (True, False):
            setattr(decoder_module, args.switch, flag)
            for _ in range(2):
                got = omni.decode(z, return_dict=False)[0]
            print(f"{args.switch}={flag}: equal {torch.equal(got, expected)}, strides {got.stride() == expected.stride()}",
                  flush=True)
        del got
        times = collections.defaultdict(list)
        for index in range(args.repeats):
            times["stock"].append(timed(lambda: stock.decode(z, return_dict=False)))
            for flag in ((True, False) if index % 2 == 0 else (False, True)):
                setattr(decoder_module, args.switch, flag)
                times[flag].append(timed(lambda: omni.decode(z, return_dict=False)))
        medians = {key: statistics.median(value) for key, value in times.items()}
        print(f"{torch.cuda.get_device_name()} torch {torch.__version__}; {args.model} bf16 480x832x81, "
              f"medians of {args.repeats}, interleaved:")
        for key, value in medians.items():
            print(f"  {key}: {value:.4f} s ({medians['stock'] / value:.3f}x)  runs {[round(t, 4) for t in times[key]]}")
        for flag in (True, False):
            setattr(decoder_module, args.switch, flag)
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                omni.decode(z, return_dict=False)
                torch.cuda.synchronize()
            totals, calls = collections.Counter(), collections.Counter()
            for event in prof.key_averages():
                key = family(event.key)
                totals[key] += event.device_time_total / 1e6
                calls[key] += event.count
            print(f"  {args.switch}={flag} kernels {sum(totals.values()):.4f} s: " + ", ".join(
                f"{key} {totals[key]:.4f} ({calls[key]})" for key, _ in totals.most_common()))
        setattr(decoder_module, args.switch, True)


if __name__ == "__main__":
    main()
