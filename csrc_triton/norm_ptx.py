"""Inline PTX for the fused norm's per-element work on the GPU: its division and its SiLU table read.

Neither runs under the interpreter (no PTX there); the launcher picks them only on the GPU.

``divide_by_norm``: ``F.normalize``'s ``x / norm.clamp_min(1e-12)`` as ATen's IEEE division rounds it. ``div.rn.f32``
per element is a reciprocal, five FMAs, a range check and a branch; here each column's divisor ``d`` gets one
reciprocal ``r = RN(1 / d)`` and each element ``q0 = RN(x * r)``, the exact remainder ``e = x - q0 * d`` (one FMA)
and ``q = RN(q0 + e * r)``. For every bf16 and fp16 x and every fp32 d that is the IEEE quotient wherever it and
the intermediates stay normal (gpu-logs/session29 D, exhaustive on the CPU and the GPU). That is guarded per pack of
elements: ``d <= 2**40`` (``r`` is NaN otherwise) and every ``|q0|`` in [2**-60, 2**60], so ``x`` and ``e`` stay
normal too; a pack failing it (a zero, a tiny or huge x, an inf or NaN) is divided by ``div.rn`` instead.

``lookup_16bit``: a 16-bit table entry read by an inline load. The same read as ``tl.load(table + bits)``, but a
load Triton cannot coalesce makes it lay the whole tile out per column (one column of 16 channels per thread,
every channel's gamma and bias loaded on their own); opaque to its layout pass, the read lets the tile keep the
contiguous channels its channels-last loads and stores want (``benchmarks/count_sass.py``).
"""

import triton
import triton.language as tl

LOWEST_ESTIMATE = "0f21800000"  # 2**-60
HIGHEST_ESTIMATE = "0f5D800000"  # 2**60
LARGEST_DIVISOR = tl.constexpr(2.0**40)


PACK = 8  # elements per guard: each thread of a launch taking this division holds a multiple of it


def division_asm(pack: int) -> str:
    """PTX dividing ``pack`` elements: outputs $0.., then the dividends, the negated divisors, the reciprocals."""
    dividends = [f"${pack + i}" for i in range(pack)]
    negated = [f"${2 * pack + i}" for i in range(pack)]
    reciprocals = [f"${3 * pack + i}" for i in range(pack)]
    lines = ["{", f".reg .f32 q<{pack}>, e<{pack}>, a, d;", ".reg .pred ok;"]
    for i, (x, nd, r) in enumerate(zip(dividends, negated, reciprocals)):
        chain = ("and.", ", ok") if i else ("", "")
        lines += [
            f"mul.rn.f32 q{i}, {x}, {r};",
            f"fma.rn.f32 e{i}, q{i}, {nd}, {x};",
            f"fma.rn.f32 ${i}, e{i}, {r}, q{i};",
            f"abs.f32 a, q{i};",
            f"setp.ge.{chain[0]}f32 ok, a, {LOWEST_ESTIMATE}{chain[1]};",
            f"setp.le.and.f32 ok, a, {HIGHEST_ESTIMATE}, ok;",
        ]
    lines.append("@ok bra DONE;")  # labels are local to the braces: every inlined copy has its own
    for i, (x, nd) in enumerate(zip(dividends, negated)):
        lines += [f"neg.f32 d, {nd};", f"div.rn.f32 ${i}, {x}, d;"]
    lines += ["DONE:", "}"]
    return "\n".join(lines)


DIVISION_ASM = tl.constexpr(division_asm(PACK))
DIVISION_CONSTRAINTS = tl.constexpr(",".join(["=f"] * PACK + ["f"] * (3 * PACK)))
DIVISION_PACK = tl.constexpr(PACK)


@triton.jit
def divide_by_norm(x, norm):
    """fp32 ``x / max(norm, 1e-12)`` rounded as ``div.rn``; ``norm`` has one value per column of x (broadcast along
    its channels), and each thread must hold a multiple of ``PACK`` elements of x."""
    divisor = tl.where(norm < 1e-12, 1e-12, norm)
    reciprocal = tl.where(divisor <= LARGEST_DIVISOR, tl.math.div_rn(1.0, divisor), float("nan"))
    return tl.inline_asm_elementwise(DIVISION_ASM, DIVISION_CONSTRAINTS,
                                     [x, tl.broadcast_to(-divisor, x.shape), tl.broadcast_to(reciprocal, x.shape)],
                                     dtype=tl.float32, is_pure=True, pack=DIVISION_PACK)


@triton.jit
def lookup_16bit(table_ptr, bits, dtype: tl.constexpr):
    """``tl.load(table_ptr + bits)`` of a 65536-entry 16-bit table (bits in [0, 65536)), as fp32."""
    base = tl.broadcast_to(table_ptr.to(tl.int64, bitcast=True), bits.shape)
    entry = tl.inline_asm_elementwise("{ .reg .b64 a; mad.wide.u32 a, $1, 2, $2; ld.global.nc.b16 $0, [a]; }",
                                      "=h,r,l", [bits, base], dtype=tl.int16, is_pure=True, pack=1)
    return entry.to(dtype, bitcast=True).to(tl.float32)
