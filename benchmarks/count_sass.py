"""The fused norm kernel's SASS at a decoder launch, compiled for sm_90 on this machine (no GPU needed).

    python benchmarks/count_sass.py [--channels 256 --size 240x416 --frames 4] [--out DIR]

Runs ``launch_cat_pad_5d`` on meta tensors with the kernel launch recorded instead of run, so the
launcher picks its real tile and arguments; compiles that specialisation (integer arguments
divisible by 16 or equal to 1 specialised as Triton's launcher would) with the ptxas Triton ships,
and prints, for a raw channels-last conv output with its bias and for an NCDHW x, the instructions
of the kernel's main path (up to its first EXIT, without the IEEE division's slow-path subroutine)
per element, the layout conversions in Triton's GPU IR (each a trip through shared memory between
barriers: a transposing tile needs one), and the opcodes by count. The Triton version here may differ
from the GPU machine's, and the counts with it: Triton 3.9 put the raw channels-last norm at 57.5
instructions per element where the GPU's Triton 3.6 builds it in 48.7 (gpu-logs/session37/count_sass_cpu.log).
Count with the GPU's version (``pip install triton==3.6.0`` into a separate environment) before planning
from the numbers.
"""

from __future__ import annotations

import argparse
import collections
import importlib
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops import _backend  # noqa: E402

cat_pad = importlib.import_module("torch_wanops.ops.cat_pad_5d")
POINTER_TYPES = {torch.bfloat16: "*bf16", torch.float16: "*fp16", torch.float32: "*fp32"}


class RecordedLaunch:
    """Stands in for the kernel module: ``cat_pad_5d_kernel[grid](*args, **kwargs)`` keeps its arguments."""

    def __init__(self) -> None:
        self.args: tuple = ()
        self.kwargs: dict = {}
        self.cat_pad_5d_kernel = self

    def __getitem__(self, grid):
        def record(*args, **kwargs):
            self.args, self.kwargs = args, kwargs
        return record


def compile_recorded(launch: RecordedLaunch):
    """The recorded launch's kernel specialisation compiled for sm_90 (Triton's own ptxas)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernel = cat_pad._kernels.cat_pad_5d_kernel
    values = list(launch.args) + [launch.kwargs[name] for name in kernel.arg_names[len(launch.args):]]
    signature, constants, attrs = {}, {}, {}
    for index, (name, value) in enumerate(zip(kernel.arg_names, values)):
        specialised = not kernel.params[index].do_not_specialize
        if name.isupper():
            signature[name], constants[name] = "constexpr", value
        elif isinstance(value, torch.Tensor):
            signature[name], attrs[(index,)] = POINTER_TYPES[value.dtype], [["tt.divisibility", 16]]
        elif isinstance(value, float):
            signature[name] = "fp32"
        elif specialised and value == 1:
            signature[name], constants[name] = "constexpr", 1
        else:
            signature[name] = "i32"
            if specialised and value % 16 == 0:
                attrs[(index,)] = [["tt.divisibility", 16]]
    options = {"num_warps": launch.kwargs["num_warps"], "enable_fp_fusion": False}
    return triton.compile(ASTSource(kernel, signature, constants, attrs), target=GPUTarget("cuda", 90, 32),
                          options=options)


def main_path_opcodes(sass: str) -> list[str]:
    """Opcodes up to the kernel's first EXIT (the division's slow path is a subroutine after it)."""
    opcodes = []
    for line in sass.splitlines():
        if "\t" not in line:
            continue
        instruction = re.sub(r"^@!?U?P[T0-9]+\s+", "", line.split("\t", 1)[1].strip())
        opcode = instruction.split()[0].rstrip(";") if instruction else ""
        if opcode.startswith("EXIT"):
            break
        if opcode[:1].isupper():
            opcodes.append(opcode)
    return opcodes


def main() -> None:
    from triton.tools.disasm import get_sass

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--channels", type=int, default=256)
    parser.add_argument("--size", default="240x416")
    parser.add_argument("--frames", type=int, default=4)
    parser.add_argument("--out", help="also write each variant's SASS there")
    args = parser.parse_args()
    if _backend.INTERPRETER:
        raise SystemExit("run without TRITON_INTERPRET=1: the interpreter's launch tiles are not the GPU's")
    height, width = (int(v) for v in args.size.split("x"))
    shape, dtype = (1, args.channels, args.frames, height, width), torch.bfloat16
    padding = (1, 1, 1, 1, 2, 0)
    meta = dict(dtype=dtype, device="meta")
    gamma = torch.empty(args.channels, 1, 1, 1, **meta)
    silu_table = torch.empty(1 << 16, **meta)
    norm = torch.empty(1, 1, *shape[2:], dtype=torch.float32, device="meta")
    raw_bias = torch.empty(args.channels, **meta)
    for name, layout, bias in (("raw channels-last x + bias", torch.channels_last_3d, raw_bias),
                               ("NCDHW x", torch.contiguous_format, None)):
        x = torch.empty(shape, **meta).contiguous(memory_format=layout)
        cache = torch.empty(1, args.channels, 2, height, width, **meta).contiguous(memory_format=layout)
        strides = cat_pad.cat_pad_5d_out_strides(x, cache, padding, True)
        prologue = cat_pad.NormPrologue(norm, gamma, args.channels ** 0.5, True, silu_table, bias)
        launch, kernels = RecordedLaunch(), cat_pad._kernels
        cat_pad._kernels = launch
        try:
            cat_pad.launch_cat_pad_5d(x, cache, padding, 2, strides, prologue)
        finally:
            cat_pad._kernels = kernels
        compiled = compile_recorded(launch)
        sass = get_sass(compiled.asm["cubin"])
        opcodes = main_path_opcodes(sass)
        tile = (launch.kwargs["BLOCK_C"], launch.kwargs["BLOCK_W"], launch.kwargs["num_warps"])
        per_thread = tile[0] * tile[1] // (32 * tile[2])
        counts = collections.Counter(opcode.split(".")[0] for opcode in opcodes)
        print(f"{name}: tile {tile[0]} x {tile[1]} on {tile[2]} warps, {per_thread} elements per thread, "
              f"main path {len(opcodes)} instructions, {len(opcodes) / per_thread:.1f} per element; "
              f"{compiled.asm['ttgir'].count('ttg.convert_layout')} layout conversions, {counts['BAR']} barriers")
        print("  " + ", ".join(f"{opcode} {count}" for opcode, count in counts.most_common(24)))
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            with open(os.path.join(args.out, f"{name.split()[0]}.sass"), "w", encoding="utf-8") as f:
                f.write(sass)


if __name__ == "__main__":
    main()
