"""Is a kernel edit a no-op on the GPU? Compare the PTX of csrc_triton at a git revision and in the tree.

Compiles every kernel for sm_90 on this machine (no GPU needed: Triton ships ptxas)
at a few representative constexpr settings, once from ``git show REV:csrc_triton``
and once from the working tree, and compares the PTX after renaming registers in
order of appearance and dropping debug info and parameter loads. "same" means the
same instruction sequence; parameters added or removed are listed separately.
This is evidence for edits meant to leave the GPU path alone (the GPU tests still
decide); the Triton version here may differ from the GPU machine's.

    python benchmarks/compare_ptx.py --base HEAD~1
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import re
import subprocess
import sys
import tempfile

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# kernel module -> (kernel name, [constexpr settings]); settings a version lacks are ignored.
COMMON = {"HAS_CACHE": True, "HAS_KEEP": True, "LIBDEVICE_EXP": True, "SILU_TABLE": False, "HAS_BIAS": False, "LINES": 1,
          "TF32_OUT": False, "UPSAMPLE": 1, "X_ALIGNED": False, "MERGE_FIRST": False}
# bias_add_contiguous_kernel without a residual's bias, DupUp3D factors or frame groups, one line per program.
BIAS_ADD = {"HAS_RESIDUAL_BIAS": False, "FACTOR_T": 1, "FACTOR_S": 1, "REPEATS": 1, "FRAME_GROUPS": 1, "LINES": 1}
CASES = {
    "cat_pad_5d": ("cat_pad_5d_kernel", [
        {**COMMON, "NORM": False, "SILU": False, "INDEX64": False, "BLOCK_C": 4, "BLOCK_W": 512},
        {**COMMON, "NORM": True, "SILU": True, "INDEX64": False, "BLOCK_C": 16, "BLOCK_W": 128},
        {**COMMON, "NORM": True, "SILU": True, "INDEX64": True, "BLOCK_C": 64, "BLOCK_W": 16},
    ]),
    "bias_add_contiguous": ("bias_add_contiguous_kernel", [
        {**BIAS_ADD, "HAS_RESIDUAL": False, "INDEX64": False, "BLOCK_C": 128, "BLOCK_W": 128},
        {**BIAS_ADD, "HAS_RESIDUAL": True, "HAS_RESIDUAL_BIAS": True, "INDEX64": True, "BLOCK_C": 128,
         "BLOCK_W": 128},
        {**BIAS_ADD, "HAS_RESIDUAL": True, "FACTOR_T": 2, "FACTOR_S": 2, "REPEATS": 4, "INDEX64": False,
         "BLOCK_C": 32, "BLOCK_W": 128},
        {**BIAS_ADD, "HAS_RESIDUAL": False, "FRAME_GROUPS": 2, "INDEX64": False, "BLOCK_C": 128, "BLOCK_W": 128},
    ]),
    "dup_up3d_add": ("dup_up3d_add_kernel", [
        {"FACTOR_T": 2, "FACTOR_S": 2, "REPEATS": 4, "INNER_IS_CHANNEL": False, "INDEX64": False, "ROWS": 1,
         "BLOCK": 1024},
        {"FACTOR_T": 1, "FACTOR_S": 2, "REPEATS": 2, "INNER_IS_CHANNEL": True, "INDEX64": True, "ROWS": 8,
         "BLOCK": 128},
    ]),
    "conv3d_chunked": ("conv3d_chunked_kernel", [
        {"IN_CHANNELS": 96, "KT": 3, "KH": 3, "KW": 3, "CHUNK": 32, "ROUND_X": False, "DOT_IN_FP32": False,
         "INDEX64": False, "BLOCK_M": 256, "BLOCK_N1": 64, "BLOCK_N2": 32, "TAIL_SEGMENTS": 1, "TAIL": False},
        {"IN_CHANNELS": 192, "KT": 3, "KH": 3, "KW": 3, "CHUNK": 32, "ROUND_X": False, "DOT_IN_FP32": False,
         "INDEX64": True, "BLOCK_M": 128, "BLOCK_N1": 64, "BLOCK_N2": 0, "TAIL_SEGMENTS": 1, "TAIL": False},
        {"IN_CHANNELS": 192, "KT": 3, "KH": 3, "KW": 3, "CHUNK": 32, "ROUND_X": False, "DOT_IN_FP32": False,
         "INDEX64": False, "BLOCK_M": 128, "BLOCK_N1": 128, "BLOCK_N2": 0, "TAIL_SEGMENTS": 3, "TAIL": True},
    ]),
    "channel_norm": ("channel_norm_kernel", [
        {"HAS_BIAS": False, "INDEX64": False, "BLOCK": 128},
        {"HAS_BIAS": True, "INDEX64": True, "BLOCK": 128},
    ]),
}
FP32_POINTERS = {"norm_ptr"}
FP32_SCALARS = {"scale"}
REGISTER = re.compile(r"%(rd|r|p|f|rs|fd)(\d+)")
# Debug info (.loc, .file, the .b8/.b32 data of the debug sections, the $L__tmp labels that mark
# inlined functions' scopes for it) and parameter plumbing.
DROPPED = re.compile(r"\s*(\.loc|\.file|\.b\d+\b|\.param|ld\.param|\$L__tmp\d+:)")


def compile_ptx(module, kernel_name: str, setting: dict) -> tuple[list[str], list[str]] | None:
    """(canonical instruction lines, parameter names) of one kernel at one constexpr setting;
    None when the kernel has a constexpr the setting does not give."""
    fn = getattr(module, kernel_name)
    if any(name.isupper() and name not in setting for name in fn.arg_names):
        return None
    signature, constants = {}, {}
    for name in fn.arg_names:
        if name.isupper():
            signature[name] = "constexpr"
            constants[name] = setting[name]
        elif name.endswith("_ptr"):
            signature[name] = "*fp32" if name in FP32_POINTERS else "*bf16"
        else:
            signature[name] = "fp32" if name in FP32_SCALARS else "i32"
    compiled = triton.compile(ASTSource(fn, signature, constants), target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": 4, "enable_fp_fusion": False})
    names: dict[str, str] = {}
    lines = []
    for line in compiled.asm["ptx"].splitlines():
        line = line.split("//")[0].rstrip()
        if not line.strip() or DROPPED.match(line):
            continue
        lines.append(REGISTER.sub(lambda m: names.setdefault(m.group(0), f"%{m.group(1)}#{len(names)}"), line))
    params = [name for name in fn.arg_names if not name.isupper()]
    return lines, params


def load_kernels(source_dir: str, package: str) -> dict:
    """The kernel modules of CASES found in ``package`` (a revision may not have them all)."""
    sys.path.insert(0, source_dir)
    try:
        modules = {}
        for name in CASES:
            try:
                modules[name] = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError:
                pass
        return modules
    finally:
        sys.path.remove(source_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", default="HEAD", help="git revision to compare the working tree with")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base_kernels")
        os.makedirs(base)
        archive = subprocess.run(["git", "-C", ROOT, "archive", args.base, "csrc_triton"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", base, "--strip-components=1"], input=archive, check=True)
        tree = os.path.join(tmp, "tree_kernels")
        subprocess.run(["cp", "-r", os.path.join(ROOT, "csrc_triton"), tree], check=True)
        old, new = load_kernels(tmp, "base_kernels"), load_kernels(tmp, "tree_kernels")
        for module, (kernel_name, settings) in CASES.items():
            if module not in old or module not in new:
                print(f"{kernel_name}: not comparable (not in both)")
                continue
            for setting in settings:
                flags = " ".join(f"{k}={v}" for k, v in setting.items())
                compiled = [compile_ptx(kernels[module], kernel_name, setting) for kernels in (old, new)]
                if None in compiled:
                    print(f"{kernel_name} [{flags}]: not comparable (its constexprs changed)")
                    continue
                (old_lines, old_params), (new_lines, new_params) = compiled
                diff = [line for line in difflib.unified_diff(old_lines, new_lines, lineterm="", n=0)
                        if line[:1] in "+-" and not line.startswith(("+++", "---"))]
                params = sorted(set(old_params) ^ set(new_params))
                verdict = "same" if not diff else f"{len(diff)} differing lines"
                print(f"{kernel_name} [{flags}]: {verdict}" + (f"; parameters added/removed: {params}" if params else ""))
                for line in diff[:10]:
                    print("    " + line)


if __name__ == "__main__":
    main()
