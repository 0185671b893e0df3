"""Session 36: the fused norm's division alone, div.rn against a per-column reciprocal with one FMA correction and a
per-element guard in inline PTX, compiled for sm_90 on the CPU; main-path SASS instructions per element (static).

    python benchmarks/results/gpu-logs/session36/scripts/division_sass_cpu.py   (from the repository root)
"""
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks"))
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from triton.tools.disasm import get_sass

from count_sass import main_path_opcodes  # noqa: E402

GUARDED = tl.constexpr("""
{
 .reg .f32 q, e, m, a, b;
 .reg .pred p;
 mul.rn.f32 q, $1, $3;
 neg.f32 m, $2;
 fma.rn.f32 e, m, q, $1;
 fma.rn.f32 q, e, $3, q;
 abs.f32 a, q;
 abs.f32 b, $1;
 setp.ltu.f32 p, a, 0f02000000;
 setp.ltu.or.f32 p, b, 0f0D800000, p;
 setp.equ.or.f32 p, a, 0f7F800000, p;
 @p div.rn.f32 q, $1, $2;
 mov.f32 $0, q;
}
""")

@triton.jit
def norm_math(x_ptr, n_ptr, out_ptr, GUARD: tl.constexpr, BLOCK: tl.constexpr, COLS: tl.constexpr):
    c = tl.arange(0, BLOCK)[:, None]
    w = tl.arange(0, COLS)[None, :]
    x = tl.load(x_ptr + w * BLOCK + c).to(tl.float32)
    n = tl.load(n_ptr + w)
    if GUARD:
        r = tl.where(n < 3.0e37, tl.math.div_rn(1.0, n), float("nan"))
        q = tl.inline_asm_elementwise(GUARDED, "=f,f,f,f", [x, n + tl.zeros_like(x), r + tl.zeros_like(x)],
                                      dtype=tl.float32, is_pure=True, pack=1)
    else:
        q = tl.math.div_rn(x, n)
    tl.store(out_ptr + w * BLOCK + c, q.to(tl.bfloat16))

for guard in (False, True):
    sig = {"x_ptr": "*bf16", "n_ptr": "*fp32", "out_ptr": "*bf16", "GUARD": "constexpr", "BLOCK": "constexpr", "COLS": "constexpr"}
    consts = {"GUARD": guard, "BLOCK": 64, "COLS": 32}
    k = triton.compile(ASTSource(norm_math, sig, consts, {(0,): [["tt.divisibility", 16]], (1,): [["tt.divisibility", 16]], (2,): [["tt.divisibility", 16]]}),
                       target=GPUTarget("cuda", 90, 32), options={"num_warps": 4, "enable_fp_fusion": False})
    ops = main_path_opcodes(get_sass(k.asm["cubin"]))
    per = 64 * 32 // 128
    cnt = collections.Counter(o.split(".")[0] for o in ops)
    print("guarded reciprocal" if guard else "div.rn", len(ops), f"{len(ops)/per:.1f}/elem", cnt.most_common(14))
