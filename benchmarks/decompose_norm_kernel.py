"""Where the fused norm kernel's time goes, and its launch tiles, on the decoder's real launches (CUDA).

Times ``cat_pad_5d_kernel`` with the norm prologue on Wan2.1's (or Wan2.2's) 480x832 launches (a residual
block's first norm: NCDHW x into a channels-last conv input; its second norm: a conv's raw
channels-last output, the bias added on the way) as the op runs it, then without SiLU, as a plain copy, over
launch tiles and under Triton's register cap (``--maxnreg``; each checked for the same bits); then
``channel_norm_kernel`` against ATen's reduction, and its tiles.

    python benchmarks/decompose_norm_kernel.py [--dtype bf16|fp16|fp32] [--model wan2.2] [--no-tiles] [--maxnreg 40 48]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import sys

import torch
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402,F401  (registers the ops)
from torch_wanops import _backend  # noqa: E402

# The op modules (torch_wanops.ops exports functions of the same names).
cat_pad_ops = importlib.import_module("torch_wanops.ops.cat_pad_5d")
rms = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")

PADDING = (1, 1, 1, 1, 2, 0)
# (channels, frames, height, width) of the residual blocks' norms, each as its first and its second norm.
BLOCK_SHAPES = {
    "wan2.1": [(96, 4, 480, 832), (192, 4, 240, 416), (384, 2, 120, 208)],
    "wan2.2": [(256, 4, 240, 416), (512, 4, 240, 416), (512, 4, 120, 208), (1024, 4, 120, 208), (1024, 4, 60, 104)],
}


def cases(model: str) -> list[tuple]:
    """(label, channels, frames, height, width, raw channels-last conv output with bias)."""
    return [(f"{c}ch {f}f {h}x{w} {'second' if raw else 'first'} norm", c, f, h, w, raw)
            for c, f, h, w in BLOCK_SHAPES[model] for raw in (False, True)]


TILES = [(c, w, warps) for c in (16, 32, 64) for w in (8, 16, 32, 64) for warps in (1, 2, 4)
         if 32 * warps <= c * w <= 4096]
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def case_inputs(channels, frames, height, width, raw, dtype):
    x = torch.randn(1, channels, frames, height, width, device="cuda", dtype=dtype)
    if raw:
        x = x.contiguous(memory_format=torch.channels_last_3d)
    cache = torch.randn(1, channels, 2, height, width, device="cuda", dtype=dtype)
    cache = cache.contiguous(memory_format=torch.channels_last_3d)
    gamma = torch.randn(channels, 1, 1, 1, device="cuda", dtype=dtype)
    bias = torch.randn(channels, device="cuda", dtype=dtype) if raw else None
    norm = rms._channel_norm(x) if bias is None else rms.launch_channel_norm(x, bias)
    table = None if dtype == torch.float32 else rms.silu_table(x.device, x.dtype)
    prologue = cat_pad_ops.NormPrologue(norm, gamma, float(channels) ** 0.5, True, table, bias)
    return x, cache, prologue, rms._out_strides(x, cache, PADDING, True)


class RegisterCap:
    """Stands in for the kernel module: launches ``cat_pad_5d_kernel`` with Triton's ``maxnreg`` option."""

    def __init__(self, kernels, maxnreg: int) -> None:
        self.kernels, self.maxnreg = kernels, maxnreg

    @property
    def cat_pad_5d_kernel(self):
        return self

    def __getitem__(self, grid):
        launch = self.kernels.cat_pad_5d_kernel[grid]
        return lambda *args, **kwargs: launch(*args, **kwargs, maxnreg=self.maxnreg)


def run_kernel(x, cache, prologue, strides, tile=None, maxnreg=None):
    original_tile, kernels = _backend.norm_tile, cat_pad_ops._kernels
    if tile is not None:
        _backend.norm_tile = lambda *args: tile
    if maxnreg is not None:
        cat_pad_ops._kernels = RegisterCap(kernels, maxnreg)
    try:
        return cat_pad_ops.launch_cat_pad_5d(x, cache, PADDING, 2, strides, prologue)
    finally:
        _backend.norm_tile, cat_pad_ops._kernels = original_tile, kernels


def time_ms(fn) -> float:
    return triton.testing.do_bench(fn, return_mode="median")


def decompose(dtype: torch.dtype, model: str, tiles: bool, register_caps: list[int]) -> None:
    for label, channels, frames, height, width, raw in cases(model):
        x, cache, prologue, strides = case_inputs(channels, frames, height, width, raw, dtype)
        expected = run_kernel(x, cache, prologue, strides)[0]
        # x, cache, output, kept frames
        nbytes = x.element_size() * (x.numel() + 2 * cache.numel() + expected.numel())

        def report(name, ms):
            print(f"{label:<18} {name:<44} {ms:.4f} ms {nbytes / ms / 1e6:6.0f} GB/s", flush=True)

        # Twice, first and last: the spread between them is the run's noise.
        tile = _backend.norm_tile(channels, width + 2, not raw)
        report(f"kernel, tile {tile}", time_ms(lambda: run_kernel(x, cache, prologue, strides)))
        no_silu = dataclasses.replace(prologue, silu=False, silu_table=None)
        report("no SiLU (timing only)", time_ms(lambda: run_kernel(x, cache, no_silu, strides)))
        report("plain copy, no norm (cat_pad_5d)", time_ms(lambda: run_kernel(x, cache, None, strides)))
        for tile in TILES if tiles else ():
            if not torch.equal(run_kernel(x, cache, prologue, strides, tile)[0], expected):
                raise AssertionError(f"{label}: tile {tile} changed bits")
            report(f"tile {tile}", time_ms(lambda t=tile: run_kernel(x, cache, prologue, strides, t)))
        for maxnreg in register_caps:
            if not torch.equal(run_kernel(x, cache, prologue, strides, maxnreg=maxnreg)[0], expected):
                raise AssertionError(f"{label}: maxnreg {maxnreg} changed bits")
            report(f"maxnreg {maxnreg}", time_ms(lambda m=maxnreg: run_kernel(x, cache, prologue, strides, maxnreg=m)))
        report("kernel again", time_ms(lambda: run_kernel(x, cache, prologue, strides)))
        dst, src = torch.empty_like(expected), torch.randn_like(expected)
        report("torch copy of the padded output", time_ms(lambda: dst.copy_(src)))


def sweep_channel_norm() -> None:
    """channel_norm_kernel against ATen's reduction (contiguous x), and its BLOCK and warps."""
    kernel = rms._norm_kernels.channel_norm_kernel
    for channels, frames, height, width in ((96, 4, 480, 832), (192, 4, 240, 416), (384, 2, 120, 208),
                                            (1024, 2, 60, 104), (1024, 4, 120, 208)):
        for raw in (False, True):
            x = torch.randn(1, channels, frames, height, width, device="cuda", dtype=torch.bfloat16)
            if raw:
                x = x.contiguous(memory_format=torch.channels_last_3d)
            bias = torch.randn(channels, device="cuda", dtype=torch.bfloat16) if raw else None
            label = f"channel_norm {channels}ch {frames}f {height}x{width} {'raw+bias' if raw else 'contiguous'}"
            if not raw:
                print(f"{label} ATen: {time_ms(lambda: rms._channel_norm(x)):.4f} ms", flush=True)
            expected = rms.launch_channel_norm(x, bias)
            ctas = rms.chunk_ctas(x, 0)  # ATen's block split of 1024 channels
            out = torch.empty_like(expected)
            for block in (32, 64, 128, 256):
                for warps in (2, 4, 8):
                    def launch(block=block, warps=warps):
                        kernel[(-(-out.numel() // block),)](
                            x, x if bias is None else bias, out, channels, frames, height, width, out.numel(), ctas,
                            *x.stride(), HAS_BIAS=raw, INDEX64=False, BLOCK=block, num_warps=warps)
                    launch()
                    if not torch.equal(out, expected):
                        raise AssertionError(f"{label} BLOCK {block} warps {warps} changed bits")
                    print(f"{label} BLOCK {block:>3} warps {warps}: {time_ms(launch):.4f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtype", choices=DTYPES, default="bf16")
    parser.add_argument("--no-channel-norm", action="store_true", help="skip the channel_norm_kernel sweep")
    parser.add_argument("--no-decompose", action="store_true", help="skip the fused norm's decomposition")
    parser.add_argument("--no-tiles", action="store_true", help="skip the fused norm's tile sweep")
    parser.add_argument("--model", choices=sorted(BLOCK_SHAPES), default="wan2.1", help="whose launches")
    parser.add_argument("--maxnreg", type=int, nargs="*", default=[],
                        help="also time the default tile with Triton's register cap (maxnreg) at these values")
    args = parser.parse_args()
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), args.dtype, args.model, flush=True)
    if not args.no_decompose:
        decompose(DTYPES[args.dtype], args.model, not args.no_tiles, args.maxnreg)
    if not args.no_channel_norm:
        sweep_channel_norm()


if __name__ == "__main__":
    main()
