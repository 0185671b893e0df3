"""Session 29 D: can the fused norm's IEEE division x / n be replaced by a reciprocal per column?

For every 16-bit x significand (bf16: 128, fp16: 1024, x in [1, 2)) and every fp32 n significand (2**23, n in
[1, 2)), the quotients x / n in (0.5, 2) cover every rounding case of normal results (scaling x or n by powers
of two scales the quotient exactly). Against ATen's RN16(div.rn(x, n)), counts the pairs where
  A: RN16(x * r),                      r = div.rn(1, n) once per column;
  B: RN16(fma(fma(-n, q, x), r, q)),   q = x * r (one FMA correction);
differ, and where B's fp32 quotient differs from div.rn's."""
import torch
import triton
import triton.language as tl


@triton.jit
def count_kernel(counts_ptr, X_BITS: tl.constexpr, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    pid = tl.program_id(0)
    n_bits = (pid * BLOCK + tl.arange(0, BLOCK)).to(tl.uint32) | 0x3F800000  # n in [1, 2)
    n = n_bits.to(tl.float32, bitcast=True)
    r = tl.math.div_rn(tl.full((BLOCK,), 1.0, tl.float32), n)
    miss_a = tl.zeros((BLOCK,), tl.int32)
    miss_b = tl.zeros((BLOCK,), tl.int32)
    miss_b32 = tl.zeros((BLOCK,), tl.int32)
    for i in range(0, 1 << X_BITS):
        x = (1.0 + i / (1 << X_BITS)) + tl.zeros((BLOCK,), tl.float32)  # exact: X_BITS <= 10
        exact = tl.math.div_rn(x, n)
        q = x * r
        a = q
        b = tl.fma(tl.fma(-n, q, x), r, q)
        miss_a += (a.to(DTYPE) != exact.to(DTYPE)).to(tl.int32)
        miss_b += (b.to(DTYPE) != exact.to(DTYPE)).to(tl.int32)
        miss_b32 += (b != exact).to(tl.int32)
    tl.atomic_add(counts_ptr + 0, tl.sum(miss_a))
    tl.atomic_add(counts_ptr + 1, tl.sum(miss_b))
    tl.atomic_add(counts_ptr + 2, tl.sum(miss_b32))


def main():
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), flush=True)
    for name, dtype, bits in (("bf16", tl.bfloat16, 7), ("fp16", tl.float16, 10)):
        counts = torch.zeros(3, dtype=torch.int32, device="cuda")
        block = 1024
        count_kernel[((1 << 23) // block,)](counts, X_BITS=bits, BLOCK=block, DTYPE=dtype, enable_fp_fusion=False)
        torch.cuda.synchronize()
        a, b, b32 = counts.tolist()
        print(f"{name}: {(1 << bits) << 23} pairs; x * r differs in {a}, one FMA correction in {b} "
              f"(its fp32 quotient differs from div.rn in {b32})", flush=True)


if __name__ == "__main__":
    main()
