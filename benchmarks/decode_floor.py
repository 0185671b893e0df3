"""How fast a lossless decode could be at best with cuDNN's convs, counted on the meta device (no GPU).

    python benchmarks/decode_floor.py --model wan2.2 --dtype bf16 --size 480x832 --frames 81

Stock's convs fix the output bits, so a lossless decode keeps their FLOPs, and every other pass works
around them: each 3x3(x3) conv's input (its cached frames and zero border included, as cuDNN reads it)
must be written by some pass and its output read by one. This counts both over one stock decode (every
``aten.convolution`` it dispatches) and prints the time each takes at a given tensor-core rate and memory
bandwidth. The 1x1(x1) convs read tensors that exist anyway and are left out of the bytes. Measured on
the H200 (benchmarks/results/levers.md): cuDNN's bf16 convs run at 745-763 TFLOP/s; copies at 3.3-4.9 TB/s.
It also counts the FLOPs that multiply the zero frames a causal conv's padding puts in front of its input where
it has fewer cached frames (every conv of the first chunk, some of the second), and of those the ones in convs
with no cached frame and one output frame (the first chunk's), which a conv of the input's later frames with the
weight's later taps alone would not compute.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import dataclass
from unittest import mock

import torch
from diffusers.models.autoencoders.autoencoder_kl_wan import WanCausalConv3d
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import add_decode_case_arguments, decode_case  # noqa: E402


@dataclass
class ConvTraffic:
    flops: int = 0  # multiply-adds x 2, every conv
    input_bytes: int = 0  # each 3x3(x3) conv's input as the conv reads it (diffusers pads Wan's causal convs first)
    output_bytes: int = 0  # each 3x3(x3) conv's output
    zero_frame_flops: int = 0  # of the FLOPs, those multiplying a causal conv's front zero frames
    uncached_one_frame_zero_frame_flops: int = 0  # of those, in one-frame convs with no cached frame (a first chunk's)


def zero_frame_flops(conv: WanCausalConv3d, x: torch.Tensor, cache_x: torch.Tensor | None) -> int:
    """The FLOPs of ``conv(x, cache_x)`` (diffusers' causal conv) that multiply the zero frames it pads in front."""
    weight = conv.weight
    cached = cache_x.shape[2] if cache_x is not None and conv._padding[4] > 0 else 0
    zeros = conv._padding[4] - cached
    frame_stride = conv.stride[0]
    out_frames = (zeros + cached + x.shape[2] - weight.shape[2]) // frame_stride + 1
    zero_taps = sum(max(0, min(weight.shape[2], zeros - frame * frame_stride)) for frame in range(out_frames))
    height = (x.shape[3] + 2 * conv._padding[2] - weight.shape[3]) // conv.stride[1] + 1
    width = (x.shape[4] + 2 * conv._padding[0] - weight.shape[4]) // conv.stride[2] + 1
    return 2 * x.shape[0] * height * width * zero_taps * weight.shape[0] * math.prod(weight.shape[3:]) * weight.shape[1]


class CountConvs(TorchDispatchMode):
    """Every ``aten.convolution`` of what runs under it: FLOPs, and the bytes of the non-pointwise ones; and of
    diffusers' causal convs, the FLOPs on their front zero frames."""

    def __init__(self) -> None:
        super().__init__()
        self.traffic = ConvTraffic()
        self._causal_forward = mock.patch.object(WanCausalConv3d, "forward", self._counted_causal_forward())

    def _counted_causal_forward(self):
        stock_forward = WanCausalConv3d.forward

        def forward(conv: WanCausalConv3d, x: torch.Tensor, cache_x: torch.Tensor | None = None) -> torch.Tensor:
            flops = zero_frame_flops(conv, x, cache_x)
            self.traffic.zero_frame_flops += flops
            if cache_x is None and x.shape[2] == 1 and conv.stride[0] == 1:
                self.traffic.uncached_one_frame_zero_frame_flops += flops
            return stock_forward(conv, x, cache_x)

        return forward

    def __enter__(self) -> "CountConvs":
        self._causal_forward.start()
        return super().__enter__()

    def __exit__(self, *exc_info) -> None:
        self._causal_forward.stop()
        super().__exit__(*exc_info)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten.convolution.default:
            x, weight = args[0], args[1]
            self.traffic.flops += 2 * out.numel() * math.prod(weight.shape[1:])
            if math.prod(weight.shape[2:]) > 1:
                self.traffic.input_bytes += x.numel() * x.element_size()
                self.traffic.output_bytes += out.numel() * out.element_size()
        return out


def count(vae: nn.Module, z: torch.Tensor) -> ConvTraffic:
    with torch.no_grad(), CountConvs() as counter:
        vae.decode(z, return_dict=False)
    return counter.traffic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--tflops", type=float, default=760.0, help="tensor-core rate of the convs, TFLOP/s")
    parser.add_argument("--tbps", type=float, default=4.8, help="memory bandwidth of the other passes, TB/s")
    args = parser.parse_args()
    vae, z = decode_case(args, "meta")
    traffic = count(vae, z)
    conv_s = traffic.flops / (args.tflops * 1e12)
    moved = traffic.input_bytes + traffic.output_bytes
    passes_s = moved / (args.tbps * 1e12)
    print(f"{args.model} {args.dtype} {args.size}x{args.frames}")
    print(f"  conv FLOPs {traffic.flops / 1e12:.1f} T: {conv_s:.3f} s at {args.tflops:g} TFLOP/s")
    print(f"  conv inputs written {traffic.input_bytes / 1e9:.1f} GB + outputs read {traffic.output_bytes / 1e9:.1f} GB:"
          f" {passes_s:.3f} s at {args.tbps:g} TB/s")
    print(f"  floor {conv_s + passes_s:.3f} s")
    zero, uncached = traffic.zero_frame_flops, traffic.uncached_one_frame_zero_frame_flops
    print(f"  of the conv FLOPs, {zero / 1e12:.2f} T ({zero / traffic.flops:.2%}: {zero / (args.tflops * 1e12):.4f} s)"
          f" multiply causal zero frames, {uncached / 1e12:.2f} T ({uncached / traffic.flops:.2%}) in one-frame convs"
          " with no cached frame")


if __name__ == "__main__":
    main()
