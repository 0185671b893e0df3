"""The convs of one decode replayed alone, back to back and one at a time after an idle pause (CUDA).

    python benchmarks/conv_replay.py --model wan2.2 --size 480x832

A lossless decode keeps stock's convs: their kernels fix the output bits (levers.md). Replayed back to back with
nothing between them (the same calls, weights and input layouts as the decode's, one recorded input per
geometry), they take the least time any lossless decode on this GPU can spend in them at its power limit; replayed
one at a time after an idle pause, each at the clock the GPU runs an isolated kernel at. Both are timed with
nvidia-smi's SM clock and power samples (clock_power.py); the decodes themselves are timed the same way for scale.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any, NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from clock_power import describe, sampled, warmed_decode, window  # noqa: E402

from torch_wanops import decoder  # noqa: E402
from torch_wanops.bench import add_decode_case_arguments, decode_case, describe_cuda_case, variant  # noqa: E402


def conv_ops() -> tuple[Any, ...]:
    """The ops whose calls are convs: ATen's, and wanops' Triton conv (the 96-channel convs of Wan2.1)."""
    return torch.ops.aten.convolution.default, torch.ops.wanops.conv3d_chunked.default


class ConvCall(NamedTuple):
    op: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


class RecordConvs(TorchDispatchMode):
    """Every conv call of what runs under it, in order. Each call's input is a copy of the first input of its
    geometry (shape, strides, dtype) that was seen: the replay reads real activations of every geometry without
    keeping every input alive. Weights and biases are kept by reference."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[ConvCall] = []
        self._inputs: dict[tuple, torch.Tensor] = {}
        self._ops = conv_ops()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self._ops:
            x = args[0]
            key = (tuple(x.shape), x.stride(), x.dtype)
            if key not in self._inputs:
                self._inputs[key] = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=x.device).copy_(x)
            self.calls.append(ConvCall(func, (self._inputs[key], *args[1:]), kwargs))
        return func(*args, **kwargs)


def record_convs(run: Any) -> list[ConvCall]:
    """The conv calls ``run()`` makes, in order. Ops dispatched below the autograd layer skip Python dispatch modes
    too, so the decoder's DISPATCH_BELOW_AUTOGRAD is off meanwhile (it changes the CPU's dispatch, not the kernels)."""
    below_autograd = decoder.DISPATCH_BELOW_AUTOGRAD
    decoder.DISPATCH_BELOW_AUTOGRAD = False
    try:
        with torch.no_grad(), RecordConvs() as recorder:
            run()
    finally:
        decoder.DISPATCH_BELOW_AUTOGRAD = below_autograd
    return recorder.calls


def replay(calls: list[ConvCall]) -> None:
    for call in calls:
        call.op(*call.args, **call.kwargs)


def replay_one_at_a_time(calls: list[ConvCall], idle_s: float) -> list[float]:
    """Each call's seconds, timed alone after ``idle_s`` of an idle GPU."""
    times = []
    for call in calls:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        time.sleep(idle_s)
        start.record()
        call.op(*call.args, **call.kwargs)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--variant", default="wanops-eager", help="the decode whose convs are replayed")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle-ms", type=float, default=30.0, help="idle pause before each lone conv")
    parser.add_argument("--interval-ms", type=int, default=20)
    args = parser.parse_args()
    print(describe_cuda_case(args), flush=True)
    vae, latents = decode_case(args, "cuda")
    names = ["diffusers-eager", args.variant]
    decode = warmed_decode(vae, latents, names)
    with variant(vae, args.variant):
        calls = record_convs(lambda: vae.decode(latents, return_dict=False))
    replay(calls)  # warm-up, and each geometry's algorithm chosen again outside the decode
    torch.cuda.synchronize()
    spans = []
    with sampled(args.interval_ms) as samples:
        for _ in range(args.rounds):
            for name in names:
                spans.append((name, *decode(name)))
            start = time.time()
            replay(calls)
            torch.cuda.synchronize()
            spans.append((f"{args.variant}'s {len(calls)} convs back to back", start, time.time()))
            time.sleep(0.5)
        start = time.time()
        lone = replay_one_at_a_time(calls, args.idle_ms / 1e3)
        lone_span = (start, time.time())
    print(f"{len(samples)} samples; per run: wall s, samples, median SM MHz, mean W, J, throttle reasons")
    for name, start, end in spans:
        print(f"  {name:40s} {end - start:.3f} s  {describe(window(samples, start, end), end - start)}", flush=True)
    lone_wall_s = lone_span[1] - lone_span[0]  # the idle pauses too: the energy is of the whole span
    print(f"  {'the same convs one at a time, ' + format(args.idle_ms, 'g') + ' ms idle before each':40s} "
          f"{sum(lone):.3f} s of kernels  {describe(window(samples, *lone_span), lone_wall_s)}", flush=True)
    times: dict[str, list[float]] = {}
    for name, start, end in spans:
        times.setdefault(name, []).append(end - start)
    for name, seconds in times.items():
        print(f"median {name}: {statistics.median(seconds):.3f} s", flush=True)


if __name__ == "__main__":
    main()
