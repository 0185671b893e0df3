"""Session 29 (CPU, not the GPU): Exhaustive on CPU (IEEE float32 numpy, FMAs emulated exactly): every 16-bit x significand in [1, 2) against every
fp32 n in [1, 2). A: RN16(RN32(x * r)), r = RN32(1 / n). B: one FMA correction. Against RN16(RN32(x / n))."""
import sys
from fractions import Fraction
import numpy as np

n = (np.arange(1 << 23, dtype=np.uint32) | np.uint32(0x3F800000)).view(np.float32)
r = (np.float32(1) / n).astype(np.float32)
n64, r64 = n.astype(np.float64), r.astype(np.float64)


def to_bf16_bits(v):
    b = v.view(np.uint32)
    return (b + np.uint32(0x7FFF) + ((b >> 16) & 1)) >> 16


def fma32_exactish(a64, b64, c64):
    """RN32(a * b + c) for float32 operands given as float64: a * b is exact in float64; the sum may round, so the
    results whose float64 sum lies within float64 rounding distance of a float32 rounding boundary are redone
    with fractions."""
    s = a64 * b64 + c64  # one float64 rounding (the product is exact)
    out = s.astype(np.float32)
    # float32 rounding boundary nearest to s: midpoint between out and its neighbour on s's side
    out64 = out.astype(np.float64)
    # the two float32 rounding boundaries around out (their spacing differs at a power of two)
    up = (np.nextafter(out, np.float32(np.inf)).astype(np.float64) + out64) / 2
    down = (np.nextafter(out, np.float32(-np.inf)).astype(np.float64) + out64) / 2
    near = np.minimum(np.abs(s - up), np.abs(s - down)) <= np.abs(s) * 2.0 ** -50
    for i in np.nonzero(near)[0]:
        exact = Fraction(float(a64[i])) * Fraction(float(b64[i])) + Fraction(float(c64[i]))
        cands = [np.nextafter(out[i], np.float32(-np.inf)), out[i], np.nextafter(out[i], np.float32(np.inf))]
        best = min(cands, key=lambda c: (abs(Fraction(float(c)) - exact), int(np.array(c).view(np.uint32)) & 1))
        out[i] = best
    return out, int(near.sum())


for name, bits in (("bf16", 7),):
    miss_a = miss_b = miss_b32 = redone = 0
    for i in range(1 << bits):
        x = np.float32(1 + i / (1 << bits))
        exact = (x / n).astype(np.float32)
        q = (x * r).astype(np.float32)
        e, k1 = fma32_exactish(-n64, q.astype(np.float64), np.float64(x) + 0 * n64)
        b, k2 = fma32_exactish(e.astype(np.float64), r64, q.astype(np.float64))
        redone += k1 + k2
        if name == "bf16":
            ex16, a16, b16 = to_bf16_bits(exact), to_bf16_bits(q), to_bf16_bits(b)
        else:
            ex16, a16, b16 = exact.astype(np.float16), q.astype(np.float16), b.astype(np.float16)
        miss_a += int((a16 != ex16).sum())
        miss_b += int((b16 != ex16).sum())
        miss_b32 += int((b != exact).sum())
    print(f"{name}: {(1 << bits) << 23} pairs; x * r differs in {miss_a}, one FMA correction in {miss_b} "
          f"(its fp32 quotient differs from the IEEE one in {miss_b32}; {redone} sums redone exactly)", flush=True)
