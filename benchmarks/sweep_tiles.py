"""Sweep the cat_pad_5d kernel's launch tile (block on the stride-1 axis, elements per program, warps) on real shapes (CUDA).

    python benchmarks/sweep_tiles.py                 # the plain copy (cat_pad_5d)
    python benchmarks/sweep_tiles.py --norm          # with the norm + SiLU prologue (rms_norm_cat_pad_5d)
    python benchmarks/sweep_tiles.py --bias-add      # bias_add_contiguous's transposing tile
    python benchmarks/sweep_tiles.py --bias-add --dup-residual   # ... adding Wan2.2's DupUp3D shortcuts
    python benchmarks/sweep_tiles.py --upsample      # upsample_nearest_2x's (transposing) line tile
    python benchmarks/sweep_tiles.py --norm --dtype fp32   # any of these in fp32 (default bf16); fp32 norms
                                                           # write TF32-grid conv inputs, as the decoder's do
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402
from torch_wanops import _backend  # noqa: E402
from torch_wanops.bench import DTYPES  # noqa: E402

CASES = [  # (label, channels, frames, height, width, layout); "transposing": NCDHW x, channels-last output
    ("384ch 2f 120x208", 384, 2, 120, 208, "contiguous"),
    ("96ch 4f 480x832", 96, 4, 480, 832, "contiguous"),
    ("384ch 2f 120x208", 384, 2, 120, 208, "channels_last"),
    ("192ch 4f 240x416", 192, 4, 240, 416, "channels_last"),
    ("96ch 4f 480x832", 96, 4, 480, 832, "transposing"),
]


# bias_add_contiguous inputs: the lever's channels-last conv outputs (channels, frames, height, width).
BIAS_CASES = [(96, 4, 480, 832), (192, 4, 240, 416), (384, 2, 120, 208), (96, 4, 960, 1664)]
# With a DupUp3D shortcut (FUSED_DUP_UP3D_ADDS): Wan2.2's upsampler conv outputs at 480x832, the up block's
# contiguous input as the source, (factor_t, factor_s, repeats).
DUP_RESIDUAL_CASES = [((512, 4, 240, 416), (1024, 4, 120, 208), (1, 2, 2)),
                      ((1024, 4, 120, 208), (1024, 2, 60, 104), (2, 2, 8))]
# upsample_nearest_2x inputs (channels, frames, height, width): Wan2.1's upsamplers at 480x832 and
# one at 720x1280. Channels-last output from NCDHW x: a transposing copy that writes 4x what it reads.
UPSAMPLE_CASES = [(192, 4, 240, 416), (384, 4, 120, 208), (384, 2, 60, 104), (192, 4, 360, 640)]


# (BLOCK_C, BLOCK_W) candidates: both axes long for transposing passes; width-long for width-fastest outputs.
TRANSPOSING_BLOCKS = ((16, 32, 64, 128, 256), (16, 32, 64, 128))
WIDTH_FASTEST_BLOCKS = ((1, 2, 4, 8, 16, 32), (64, 128, 256, 512, 1024))


def sweep_block_tiles(label: str, op, tile_function: str, default_args: tuple, nbytes: int, out: torch.Tensor,
                      blocks: tuple = TRANSPOSING_BLOCKS, expected: torch.Tensor | None = None) -> None:
    """Time ``op`` per (BLOCK_C, BLOCK_W, warps) from ``_backend.<tile_function>``; a copy of ``out`` is the ceiling.
    With ``expected``, each tile's result must equal it."""
    original = getattr(_backend, tile_function)
    try:
        for block_c in blocks[0]:
            for block_w in blocks[1]:
                for warps in (4, 8):
                    setattr(_backend, tile_function, lambda *args, tile=(block_c, block_w, warps), **kwargs: tile)
                    if expected is not None and not torch.equal(op(), expected):
                        raise AssertionError(f"{label}: tile {block_c} x {block_w}, {warps} warps changed bits")
                    ms = triton.testing.do_bench(op, return_mode="median")
                    print(f"{label:<18} block_c {block_c:>3} block_w {block_w:>3} warps {warps}: "
                          f"{ms:.4f} ms {nbytes / ms / 1e6:.0f} GB/s", flush=True)
    finally:
        setattr(_backend, tile_function, original)
    ms = triton.testing.do_bench(op, return_mode="median")
    print(f"{label:<18} default tile {original(*default_args)}: {ms:.4f} ms {nbytes / ms / 1e6:.0f} GB/s")
    src, dst = torch.randn_like(out), torch.empty_like(out)
    ms = triton.testing.do_bench(lambda: dst.copy_(src), return_mode="median")
    print(f"{label:<18} copy of the output: {ms:.4f} ms", flush=True)


def sweep_bias_add(dtype: torch.dtype, dup_residual: bool) -> None:
    """bias_add_contiguous's transposing tile; with ``dup_residual`` adding a DupUp3D shortcut, its
    default's bits checked at every tile."""
    cases = DUP_RESIDUAL_CASES if dup_residual else [(shape, None, None) for shape in BIAS_CASES]
    for (channels, frames, height, width), source_shape, factors in cases:
        x = torch.randn(1, channels, frames, height, width, device="cuda", dtype=dtype)
        x = x.contiguous(memory_format=torch.channels_last_3d)
        bias = torch.randn(channels, device="cuda", dtype=dtype)
        label = f"{channels}ch {frames}f {height}x{width}"
        nbytes = 2 * x.numel() * x.element_size()
        if source_shape is None:
            op = lambda x=x, bias=bias: torch_wanops.bias_add_contiguous(x, bias)  # noqa: E731
        else:
            source = torch.randn(1, *source_shape, device="cuda", dtype=dtype)
            op = lambda x=x, bias=bias, source=source, factors=factors: torch_wanops.bias_add_contiguous(  # noqa: E731
                x, bias, source, dup_factor_t=factors[0], dup_factor_s=factors[1], dup_repeats=factors[2])
            label += " +dup"
            nbytes += source.numel() * source.element_size()
        sweep_block_tiles(label, op, "transpose_tile", (channels, width, source_shape is not None), nbytes, x,
                          expected=op())


def sweep_upsample(dtype: torch.dtype) -> None:
    """upsample_nearest_2x through cat_pad_5d's line tile: channels_last output (the conv-layout lever's, a
    transposing copy), then stock's layout (width-fastest: fp32 decodes and the lever off)."""
    for channels_last in (True, False):
        for channels, frames, height, width in UPSAMPLE_CASES:
            x = torch.randn(1, channels, frames, height, width, device="cuda", dtype=dtype)
            out = torch_wanops.upsample_nearest_2x(x, channels_last)
            sweep_block_tiles(f"{channels}ch {frames}f {height}x{width} {'CL' if channels_last else 'NC'}",
                              lambda x=x, channels_last=channels_last: torch_wanops.upsample_nearest_2x(x, channels_last),
                              "line_tile", (channels, 2 * width, channels_last, False, channels_last),
                              (x.numel() + out.numel()) * x.element_size(), out,
                              TRANSPOSING_BLOCKS if channels_last else WIDTH_FASTEST_BLOCKS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--norm", action="store_true", help="sweep rms_norm_cat_pad_5d instead of cat_pad_5d")
    parser.add_argument("--bias-add", action="store_true", help="sweep bias_add_contiguous instead")
    parser.add_argument("--dup-residual", action="store_true", help="with --bias-add: adding DupUp3D shortcuts")
    parser.add_argument("--upsample", action="store_true", help="sweep upsample_nearest_2x instead")
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    print(f"# {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}, {args.dtype}")
    if args.bias_add:
        sweep_bias_add(dtype, args.dup_residual)
        return
    if args.upsample:
        sweep_upsample(dtype)
        return
    original = _backend.line_tile
    for label, channels, frames, height, width, layout in CASES:
        if layout == "transposing" and not args.norm:
            continue
        fmt = torch.channels_last_3d if layout == "channels_last" else torch.contiguous_format
        x = torch.randn(1, channels, frames, height, width, device="cuda", dtype=dtype).contiguous(memory_format=fmt)
        cache_fmt = torch.channels_last_3d if layout != "contiguous" else torch.contiguous_format
        cache = torch.randn(1, channels, 2, height, width, device="cuda", dtype=dtype).contiguous(memory_format=cache_fmt)
        gamma = torch.randn(channels, 1, 1, 1, device="cuda", dtype=dtype)

        def op(x=x, cache=cache, gamma=gamma, transposing=layout == "transposing"):
            if args.norm:
                return torch_wanops.rms_norm_cat_pad_5d(x, gamma, 2.0, True, cache, (1, 1, 1, 1, 2, 0), 2, transposing,
                                                        tf32_out=transposing and dtype == torch.float32)
            return torch_wanops.cat_pad_5d(x, cache, (1, 1, 1, 1, 2, 0), 2)

        out, kept = op()
        nbytes = (x.numel() + cache.numel() + out.numel() + kept.numel()) * x.element_size()
        for fastest in (32, 64, 128, 256, 512):
            for tile, warps in ((512, 2), (1024, 2), (1024, 4), (2048, 4), (4096, 8)):
                def line_tile(channels, width, channels_fastest, arithmetic=False, transposing=False, fastest=fastest, tile=tile,
                              warps=warps):
                    fast, other = (channels, width) if channels_fastest else (width, channels)
                    fast_block = min(_backend.next_power_of_2(fast), fastest)
                    other_block = min(_backend.next_power_of_2(other), max(1, tile // fast_block))
                    blocks = (fast_block, other_block) if channels_fastest else (other_block, fast_block)
                    return (*blocks, warps)

                _backend.line_tile = line_tile
                ms = triton.testing.do_bench(op, return_mode="median")
                print(f"{label:<18} {layout:<13} fastest {fastest:>3} tile {tile:>5} warps {warps}: "
                      f"{ms:.4f} ms {nbytes / ms / 1e6:.0f} GB/s", flush=True)
        _backend.line_tile = original
        ms = triton.testing.do_bench(op, return_mode="median")
        default = _backend.line_tile(channels, width + 2, layout != "contiguous", args.norm, layout == "transposing")
        print(f"{label:<18} {layout:<13} default tile {default}: "
              f"{ms:.4f} ms {nbytes / ms / 1e6:.0f} GB/s")
        # The whole-tensor copy as the ceiling for this case's bytes.
        dst = torch.empty_like(out)
        src = torch.randn_like(out)
        ms = triton.testing.do_bench(lambda: dst.copy_(src), return_mode="median")
        print(f"{label:<18} {layout:<13} copy of the padded output: {ms:.4f} ms")


if __name__ == "__main__":
    main()
