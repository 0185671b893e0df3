"""Where the cat_pad_5d kernel spends its instructions (CUDA): time each variant, then count its SASS.

Times the plain copy, the norm prologue without and with SiLU (computed, or looked up
in a table of ATen's SiLU of every bf16 value), on one full-resolution
Wan2.1 shape in each layout, then prints every compiled variant's static SASS
instruction mix (opcodes by count). Needs the cuobjdump that ships with Triton.

    python benchmarks/inspect_cat_pad_kernel.py [DIR]   # DIR: also write each variant's SASS and PTX there
"""

from __future__ import annotations

import collections
import importlib
import os
import re
import sys

import torch
import triton.testing

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402
from torch_wanops.ops.cat_pad_5d import NormPrologue, launch_cat_pad_5d  # noqa: E402

SHAPE = (1, 96, 4, 480, 832)
PADDING = (1, 1, 1, 1, 2, 0)
# A SASS line: "/*0040*/  @!P0 IMAD.MOV.U32 R1, ..." (the predicate is optional).
OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)")


def time_variants() -> None:
    gamma = torch.randn(SHAPE[1], 1, 1, 1, device="cuda", dtype=torch.bfloat16)
    for layout in ("contiguous", "channels_last", "transposing"):
        x_format = torch.channels_last_3d if layout == "channels_last" else torch.contiguous_format
        cache_format = torch.contiguous_format if layout == "contiguous" else torch.channels_last_3d
        x = torch.randn(SHAPE, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=x_format)
        cache = torch.randn(*SHAPE[:2], 2, *SHAPE[3:], device="cuda", dtype=torch.bfloat16)
        cache = cache.contiguous(memory_format=cache_format)
        transposing = layout == "transposing"
        rms = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")
        norm = rms._channel_norm(x)
        prologue = NormPrologue(norm, gamma, 2.0, True)
        table_prologue = NormPrologue(norm, gamma, 2.0, True, rms.silu_table(x.device, x.dtype))
        strides = rms._out_strides(x, cache, PADDING, transposing)
        variants = {
            "norm": lambda: torch_wanops.rms_norm_cat_pad_5d(x, gamma, 2.0, False, cache, PADDING, 2, transposing),
            "norm+silu": lambda: torch_wanops.rms_norm_cat_pad_5d(x, gamma, 2.0, True, cache, PADDING, 2, transposing),
            # The kernel alone (the channel norm precomputed), SiLU computed or looked up in ATen's results.
            "norm+silu, kernel only": lambda: launch_cat_pad_5d(x, cache, PADDING, 2, strides, prologue),
            "norm+silu table, kernel only": lambda: launch_cat_pad_5d(x, cache, PADDING, 2, strides, table_prologue),
        }
        if not transposing:
            variants = {"copy": lambda: torch_wanops.cat_pad_5d(x, cache, PADDING, 2), **variants}
        for name, op in variants.items():
            ms = triton.testing.do_bench(op, return_mode="median")
            print(f"{layout:<13} {name:<28} {ms:.4f} ms", flush=True)
        out = variants["norm+silu"]()[0]
        dst, src = torch.empty_like(out), torch.randn_like(out)
        ms = triton.testing.do_bench(lambda: dst.copy_(src), return_mode="median")
        print(f"{layout:<13} {'copy_':<28} {ms:.4f} ms (torch copy of the padded output)")


def instruction_mix(dump_dir: str | None) -> None:
    kernel = importlib.import_module("torch_wanops.ops.cat_pad_5d")._kernels.cat_pad_5d_kernel
    for caches in kernel.device_caches.values():
        for index, compiled in enumerate(caches[0].values()):
            names = (kernel.arg_names[key[0]] if isinstance(key, tuple) else key for key in compiled.src.constants)
            flags = {name: value for name, value in zip(names, compiled.src.constants.values()) if name.isupper()}
            sass = compiled.asm["sass"]
            opcodes = collections.Counter(m.group(1).split(".")[0] for m in OPCODE.finditer(sass))
            print(f"\n{flags} regs={getattr(compiled, 'n_regs', '?')} spills={getattr(compiled, 'n_spills', '?')} "
                  f"sass instructions={sum(opcodes.values())}")
            print("  " + ", ".join(f"{op} {n}" for op, n in opcodes.most_common(24)))
            if dump_dir:
                with open(os.path.join(dump_dir, f"variant{index}.txt"), "w") as f:
                    f.write(f"{flags}\n{sass}\n{compiled.asm['ptx']}")


if __name__ == "__main__":
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name())
    time_variants()
    instruction_mix(sys.argv[1] if len(sys.argv) > 1 else None)
