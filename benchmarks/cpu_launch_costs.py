"""CPU time to issue one call of each op a latent-resolution decoder step makes (CUDA), the GPU held busy.

    python benchmarks/cpu_launch_costs.py [--channels 1024 --size 30x52]

A ~1 s sleep kernel is queued first, so no call waits for the GPU; each op is then issued
``--calls`` times, in ``--rounds`` interleaved rounds, and the median CPU time per call printed (the median
and the least of the rounds): the wanops ops through their Python
wrappers (and, where it applies, the layers below: dispatch, the launcher, Triton's launch), and the
ATen calls the decoder makes beside them (the conv, the norm reduction, an empty tensor).
"""

from __future__ import annotations

import argparse
import importlib
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402

SLEEP_CYCLES = 2_000_000_000


def per_call_us(fn, calls: int) -> float:
    fn()
    torch.cuda.synchronize()
    torch.cuda._sleep(SLEEP_CYCLES)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    torch.cuda.synchronize()
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=1024)
    parser.add_argument("--size", default="30x52")
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    height, width = (int(v) for v in args.size.split("x"))
    channels, dtype, device = args.channels, torch.bfloat16, "cuda"
    cat_pad = importlib.import_module("torch_wanops.ops.cat_pad_5d")
    rms = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")

    def tensor(*shape, memory_format=torch.contiguous_format):
        return torch.randn(shape, device=device, dtype=dtype).contiguous(memory_format=memory_format)

    channels_last = torch.channels_last_3d
    x = tensor(1, channels, 1, height, width)
    raw = tensor(1, channels, 1, height, width, memory_format=channels_last)
    cache = tensor(1, channels, 2, height, width, memory_format=channels_last)
    gamma = tensor(channels, 1, 1, 1)
    bias = tensor(channels)
    weight = tensor(channels, channels, 3, 3, 3)
    weight_cl = weight.contiguous(memory_format=channels_last)
    padding = [1, 1, 1, 1, 2, 0]
    padded = tensor(1, channels, 3, height + 2, width + 2, memory_format=channels_last)
    out = F.conv3d(padded, weight_cl)
    norm = rms._channel_norm(x)
    table = rms.silu_table(x.device, dtype)
    strides = rms._out_strides(x, cache, padding, True)
    prologue = cat_pad.NormPrologue(norm, gamma, float(channels) ** 0.5, True, table)
    ops = {
        "torch.empty (1 MB)": lambda: torch.empty(1 << 19, device=device, dtype=dtype),
        "F.conv3d channels-last, 3x3x3": lambda: F.conv3d(padded, weight_cl),
        "F.conv3d channels-last, contiguous weight": lambda: F.conv3d(padded, weight),
        "linalg_vector_norm (ATen's channel norm)": lambda: rms._channel_norm(x),
        "wanops.channels_last_copy (weight)": lambda: torch_wanops.channels_last_copy(weight),
        "wanops.cat_pad_5d": lambda: torch_wanops.cat_pad_5d(x, cache.contiguous(), padding, 2),
        "wanops.bias_add_contiguous": lambda: torch_wanops.bias_add_contiguous(out, bias),
        "wanops.bias_add_contiguous + residual": lambda: torch_wanops.bias_add_contiguous(out, bias, x),
        "wanops.rms_norm_cat_pad_5d (ATen norm)": lambda: torch_wanops.rms_norm_cat_pad_5d(
            x, gamma, 32.0, True, cache, padding, 2, True),
        "wanops.rms_norm_cat_pad_5d (raw x + bias)": lambda: torch_wanops.rms_norm_cat_pad_5d(
            raw, gamma, 32.0, True, cache, padding, 2, True, bias),
        "  torch.ops.wanops.rms_norm_cat_pad_5d (ATen norm)": lambda: torch.ops.wanops.rms_norm_cat_pad_5d(
            x, gamma, 32.0, True, cache, padding, 2, True),
        "  launch_cat_pad_5d (norm prologue given)": lambda: cat_pad.launch_cat_pad_5d(
            x, cache, padding, 2, strides, prologue),
        "  launch_channel_norm": lambda: rms.launch_channel_norm(raw, bias),
        "  check_rms_norm_cat_pad_5d_args": lambda: rms.check_rms_norm_cat_pad_5d_args(
            x, gamma, 32.0, True, cache, padding, 2, True, None, False, 0),
    }
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}; {channels} channels at {height}x{width}, "
          f"1 frame, bf16; CPU us per call, median of {args.calls}")
    # The GPU machine's CPU time per call drifts by tens of percent over seconds (gpu-logs/session36/A): every op
    # is measured once per round, the rounds interleaved, and the median and least of the rounds printed.
    rounds = {name: [] for name in ops}
    with torch.no_grad():
        for _ in range(args.rounds):
            for name, fn in ops.items():
                rounds[name].append(per_call_us(fn, args.calls))
    print(f"{'median':>8} {'least':>8}  of {args.rounds} rounds")
    for name, times in rounds.items():
        print(f"{statistics.median(times):8.1f} {min(times):8.1f}  {name}")


if __name__ == "__main__":
    main()
