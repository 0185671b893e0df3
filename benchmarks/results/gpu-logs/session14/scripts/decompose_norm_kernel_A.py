"""Where the fused norm kernel's time goes, by leaving stages out or replacing them (CUDA).

Times ``cat_pad_5d_kernel`` with the norm prologue on the decoder's real launches
(Wan2.1 480x832: a block's first norm, NCDHW x into a channels-last conv input, and its
second norm, a conv's raw channels-last output with the bias added on the way), against
variants built from the kernel's source with one stage changed. Variants marked
"timing only" give other bits and exist to bound what a stage costs; the others must
give the real kernel's bits, and the script checks that with ``torch.equal``.

    python benchmarks/decompose_norm_kernel.py [--exhaustive]

``--exhaustive`` also checks the shared-reciprocal division sequence against
``div_rn`` on every (16-bit significand, fp32 significand) pair: with every
intermediate normal both scale exactly with the operands' exponents, so equality on
all significand pairs holds for all operands in that range.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import sys
import tempfile

import torch
import triton
import triton.language as tl
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402
from torch_wanops import _backend  # noqa: E402

# The op modules (torch_wanops.ops exports functions of the same names).
cat_pad_ops = importlib.import_module("torch_wanops.ops.cat_pad_5d")
rms = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")

PADDING = (1, 1, 1, 1, 2, 0)
CASES = [  # (label, channels, frames, height, width, raw channels-last conv output with bias)
    ("96ch first norm", 96, 4, 480, 832, False),
    ("96ch second norm", 96, 4, 480, 832, True),
    ("192ch first norm", 192, 4, 240, 416, False),
    ("192ch second norm", 192, 4, 240, 416, True),
    ("384ch second norm", 384, 2, 120, 208, True),
]
DIVISION = "tl.math.div_rn(x, tl.where(norm < 1e-12, 1e-12, norm))"
# The candidate: one correctly rounded reciprocal per column, then residual corrections per element
# (exact where every intermediate is normal: --exhaustive), with or without a per-tile range guard.
SHARED_RECIPROCAL = """
@triton.jit
def shared_reciprocal_div(x, d, CORRECTIONS: tl.constexpr):
    y = tl.math.div_rn(1.0, d)
    q = x * y
    for _ in tl.static_range(CORRECTIONS):
        q = tl.fma(tl.fma(-q, d, x), y, q)
    return q


@triton.jit
def guarded_div(x, d):
    # 2**-60 <= |x| or x == 0, d <= 2**40: every intermediate of the sequence stays normal.
    in_range = ((x == 0) | (tl.abs(x) >= 8.673617379884035e-19)) & (d <= 1099511627776.0)
    if tl.min(in_range.to(tl.int32)) == 1:
        q = shared_reciprocal_div(x, d, 2)
    else:
        q = tl.math.div_rn(x, d)
    return q


@triton.jit
def rms_norm_silu("""
# (name, exact?, source replacements)
VARIANTS = [
    ("shared reciprocal, 1 correction, unguarded", True,
     [("\n\n@triton.jit\ndef rms_norm_silu(", SHARED_RECIPROCAL),
      (DIVISION, "shared_reciprocal_div(x, tl.where(norm < 1e-12, 1e-12, norm), 1)")]),
    ("shared reciprocal, 2 corrections, unguarded", True,
     [("\n\n@triton.jit\ndef rms_norm_silu(", SHARED_RECIPROCAL),
      (DIVISION, "shared_reciprocal_div(x, tl.where(norm < 1e-12, 1e-12, norm), 2)")]),
    ("shared reciprocal, 2 corrections, tile guard", True,
     [("\n\n@triton.jit\ndef rms_norm_silu(", SHARED_RECIPROCAL),
      (DIVISION, "guarded_div(x, tl.where(norm < 1e-12, 1e-12, norm))")]),
    ("division by a column reciprocal (timing only)", False,
     [(DIVISION, "x * (1.0 / tl.where(norm < 1e-12, 1e-12, norm))")]),
    ("no roundings (timing only)", False,
     [("round_to(y * scale, dtype)", "y * scale"), ("round_to(y * gamma, dtype)", "y * gamma")]),
    ("no norm load (timing only)", False,
     [("norm = tl.load(norm_ptr + norm_offset, mask=columns_inside & line_inside & (x_frame >= 0), other=1.0)",
       "norm = 1.0")]),
]


def variant_module(name: str, replacements: list[tuple[str, str]]):
    """A copy of the csrc_triton package with cat_pad_5d.py's source edited, imported under its own name."""
    source_dir = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "csrc_triton")
    root = tempfile.mkdtemp(prefix="wanops_variant_")
    package = f"variant_{abs(hash(name)) % 10**8}"
    shutil.copytree(source_dir, os.path.join(root, package))
    path = os.path.join(root, package, "cat_pad_5d.py")
    with open(path) as f:
        source = f.read()
    for old, new in replacements:
        if old not in source:
            raise ValueError(f"variant {name!r}: {old!r} not in the kernel source")
        source = source.replace(old, new)
    with open(path, "w") as f:
        f.write(source)
    sys.path.insert(0, root)
    return importlib.import_module(f"{package}.cat_pad_5d")


def case_inputs(channels, frames, height, width, raw, dtype=torch.bfloat16):
    x = torch.randn(1, channels, frames, height, width, device="cuda", dtype=dtype)
    if raw:
        x = x.contiguous(memory_format=torch.channels_last_3d)
    cache = torch.randn(1, channels, 2, height, width, device="cuda", dtype=dtype)
    cache = cache.contiguous(memory_format=torch.channels_last_3d)
    gamma = torch.randn(channels, 1, 1, 1, device="cuda", dtype=dtype)
    bias = torch.randn(channels, device="cuda", dtype=dtype) if raw else None
    norm = rms.launch_channel_norm(x, bias) if raw else rms._channel_norm(x)
    prologue = cat_pad_ops.NormPrologue(norm, gamma, float(channels) ** 0.5, True, rms.silu_table(x.device, x.dtype), bias)
    strides = rms._out_strides(x, cache, PADDING, True)
    return x, cache, prologue, strides


def run_kernel(module, x, cache, prologue, strides, tile=None):
    original_kernels, original_tile = cat_pad_ops._kernels, _backend.line_tile
    cat_pad_ops._kernels = module
    if tile is not None:
        _backend.line_tile = lambda *args, **kwargs: tile
    try:
        return cat_pad_ops.launch_cat_pad_5d(x, cache, PADDING, 2, strides, prologue)
    finally:
        cat_pad_ops._kernels, _backend.line_tile = original_kernels, original_tile


def decompose() -> None:
    real = cat_pad_ops._kernels
    variants = [(name, exact, variant_module(name, edits)) for name, exact, edits in VARIANTS]
    for label, channels, frames, height, width, raw in CASES:
        x, cache, prologue, strides = case_inputs(channels, frames, height, width, raw)
        expected = run_kernel(real, x, cache, prologue, strides)[0]
        nbytes = 2 * (x.numel() + 2 * cache.numel() + expected.numel())  # x, cache, output, kept frames

        def report(name, ms):
            print(f"{label:<18} {name:<48} {ms:.4f} ms {nbytes / ms / 1e6:6.0f} GB/s", flush=True)

        report("kernel", triton.testing.do_bench(lambda: run_kernel(real, x, cache, prologue, strides),
                                                 return_mode="median"))
        for name, exact, module in variants:
            got = run_kernel(module, x, cache, prologue, strides)[0]
            if exact:
                name += ": same bits" if torch.equal(got, expected) else ": BITS DIFFER"
            report(name, triton.testing.do_bench(lambda m=module: run_kernel(m, x, cache, prologue, strides),
                                                 return_mode="median"))
        no_silu = cat_pad_ops.NormPrologue(prologue.norm, prologue.gamma, prologue.scale, False, None, prologue.bias)
        report("no SiLU (timing only)", triton.testing.do_bench(
            lambda: run_kernel(real, x, cache, no_silu, strides), return_mode="median"))
        report("plain copy, no norm (cat_pad_5d)", triton.testing.do_bench(
            lambda: run_kernel(real, x, cache, None, strides), return_mode="median"))
        for block_c in (16, 32, 64, 128):
            for block_w in (8, 16, 32, 64):
                for warps in (2, 4, 8):
                    if block_c * block_w < 64 * warps or block_c * block_w > 8192:
                        continue
                    tile = (block_c, block_w, warps)
                    if not torch.equal(run_kernel(real, x, cache, prologue, strides, tile)[0], expected):
                        raise AssertionError(f"{label}: tile {tile} changed bits")
                    report(f"tile {tile}", triton.testing.do_bench(
                        lambda t=tile: run_kernel(real, x, cache, prologue, strides, t), return_mode="median"))
        dst, src = torch.empty_like(expected), torch.randn_like(expected)
        report("torch copy of the padded output", triton.testing.do_bench(lambda: dst.copy_(src),
                                                                         return_mode="median"))


def sweep_channel_norm() -> None:
    """channel_norm_kernel's BLOCK and warps on the decoder's raw conv outputs (bits checked)."""
    kernel = rms._norm_kernels.channel_norm_kernel
    for channels, frames, height, width in ((96, 4, 480, 832), (192, 4, 240, 416), (384, 2, 120, 208)):
        x = torch.randn(1, channels, frames, height, width, device="cuda", dtype=torch.bfloat16)
        x = x.contiguous(memory_format=torch.channels_last_3d)
        bias = torch.randn(channels, device="cuda", dtype=torch.bfloat16)
        expected = rms.launch_channel_norm(x, bias)
        out = torch.empty_like(expected)
        for block in (32, 64, 128, 256):
            for warps in (1, 2, 4, 8):
                def launch(block=block, warps=warps):
                    kernel[(-(-out.numel() // block),)](
                        x, bias, out, channels, frames, height, width, out.numel(), *x.stride(),
                        HAS_BIAS=True, INDEX64=False, BLOCK=block, num_warps=warps)
                launch()
                if not torch.equal(out, expected):
                    raise AssertionError(f"channel_norm BLOCK {block} warps {warps} changed bits")
                ms = triton.testing.do_bench(launch, return_mode="median")
                print(f"channel_norm {channels}ch {frames}f {height}x{width} BLOCK {block:>3} warps {warps}: "
                      f"{ms:.4f} ms {x.numel() * 2 / ms / 1e6:.0f} GB/s", flush=True)


@triton.jit
def _division_mismatches_kernel(numerators_ptr, count_ptr, num_numerators, BLOCK: tl.constexpr,
                                CORRECTIONS: tl.constexpr):
    # Divisors: every fp32 significand in [1, 2); numerators: the given values in [1, 2).
    d = (0x3F800000 + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.float32, bitcast=True)
    y = tl.math.div_rn(1.0, d)
    bad = tl.zeros((BLOCK,), tl.int32)
    for i in range(num_numerators):
        x = tl.load(numerators_ptr + i)
        q = x * y
        for _ in tl.static_range(CORRECTIONS):
            q = tl.fma(tl.fma(-q, d, x), y, q)
        bad += (q != tl.math.div_rn(x, d)).to(tl.int32)
    tl.atomic_add(count_ptr, tl.sum(bad))


def exhaustive_division_check() -> None:
    """Mismatches of q = x * RN(1/d) plus CORRECTIONS residual steps against div_rn(x, d), all pairs."""
    for dtype, bits in ((torch.bfloat16, 7), (torch.float16, 10)):
        significands = torch.arange(1 << bits, device="cuda", dtype=torch.int32)
        if dtype == torch.bfloat16:
            numerators = ((significands | (127 << 7)).to(torch.int16).view(dtype)).float()
        else:
            numerators = ((significands | (15 << 10)).to(torch.int16).view(dtype)).float()
        for corrections in (1, 2):
            count = torch.zeros(1, device="cuda", dtype=torch.int32)
            block = 1024
            _division_mismatches_kernel[((1 << 23) // block,)](numerators, count, numerators.numel(), BLOCK=block,
                                                               CORRECTIONS=corrections, enable_fp_fusion=False)
            print(f"exhaustive {dtype} numerators x {1 << 23} divisor significands, {corrections} correction(s): "
                  f"{int(count.item())} mismatches", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exhaustive", action="store_true", help="also check the shared-reciprocal division")
    args = parser.parse_args()
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
    if args.exhaustive:
        exhaustive_division_check()
    decompose()
    sweep_channel_norm()


if __name__ == "__main__":
    main()
