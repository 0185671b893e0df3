"""Does a Triton implicit-GEMM conv3d reproduce cuDNN's sm80 256x32x32 kernel's bits (96 channels)? Arithmetic probe only."""
import os, sys, torch, triton, triton.language as tl
import torch.nn.functional as F
from torch_wanops.decoder import _conv_kernels

@triton.jit
def conv3d_probe(x_ptr, w_ptr, out_ptr, H_in, W_in, H_out, W_out, x_st, x_sh,
                 C: tl.constexpr, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                 TAP_MAJOR: tl.constexpr, OUT_DTYPE: tl.constexpr):
    line = tl.program_id(0)           # (t, h) output line
    wblock = tl.program_id(1)
    nblock = tl.program_id(2)
    t = line // H_out
    h = line % H_out
    offs_m = wblock * BM + tl.arange(0, BM)
    mask_m = offs_m < W_out
    offs_n = nblock * BN + tl.arange(0, BN)
    mask_n = offs_n < N
    offs_k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    if TAP_MAJOR:
        for tap in range(27):
            dt = tap // 9
            dh = (tap // 3) % 3
            dw = tap % 3
            for c0 in range(0, C, BK):
                a = tl.load(x_ptr + (t + dt) * x_st + (h + dh) * x_sh + (offs_m[:, None] + dw) * C + c0 + offs_k[None, :],
                            mask=mask_m[:, None], other=0.0)
                # weight channels-last: (N, 3, 3, 3, C) -> element (n, tap, c)
                b = tl.load(w_ptr + offs_n[None, :] * (27 * C) + tap * C + c0 + offs_k[:, None], mask=mask_n[None, :], other=0.0)
                acc = tl.dot(a, b, acc)
    else:
        for c0 in range(0, C, BK):
            for tap in range(27):
                dt = tap // 9
                dh = (tap // 3) % 3
                dw = tap % 3
                a = tl.load(x_ptr + (t + dt) * x_st + (h + dh) * x_sh + (offs_m[:, None] + dw) * C + c0 + offs_k[None, :],
                            mask=mask_m[:, None], other=0.0)
                b = tl.load(w_ptr + offs_n[None, :] * (27 * C) + tap * C + c0 + offs_k[:, None], mask=mask_n[None, :], other=0.0)
                acc = tl.dot(a, b, acc)
    out_off = (line * W_out + offs_m[:, None]) * N + offs_n[None, :]
    tl.store(out_ptr + out_off, acc.to(OUT_DTYPE), mask=mask_m[:, None] & mask_n[None, :])

def probe(shape, dtype, spread):
    v = torch.randn(shape, device="cuda") * torch.exp2(torch.randint(-spread, spread + 1, shape, device="cuda").float())
    return v.to(dtype)

CL = torch.channels_last_3d
for (cin, cout, T, H, W) in [(96, 96, 6, 482, 834), (96, 96, 3, 66, 130)]:
  for dtype, tdtype in ((torch.bfloat16, tl.bfloat16), (torch.float16, tl.float16)):
    for spread in (0, 8):
        torch.manual_seed(1)
        x = probe((1, cin, T, H, W), dtype, spread).contiguous(memory_format=CL)
        w = (probe((cout, cin, 3, 3, 3), dtype, spread) * 0.05).to(dtype)
        if dtype == torch.float16 and spread:
            x = (x.float() * 2**-8).to(dtype); w = (w.float() * 2**-8).to(dtype)
        ref, k = _conv_kernels(lambda a: F.conv3d(a, w), x)
        print(f"{cin}->{cout} {T}x{H}x{W} {dtype} spread {spread}: cuDNN {sorted(k)}", flush=True)
        wcl = w.contiguous(memory_format=CL)
        To, Ho, Wo = T - 2, H - 2, W - 2
        for (BM, BN, BK, warps, tap_major) in [(64, 32, 32, 4, True), (64, 32, 32, 2, True), (64, 32, 16, 4, True), (64, 32, 16, 2, True),
                                               (128, 32, 32, 4, True), (64, 32, 32, 1, True), (64, 32, 32, 4, False), (64, 32, 32, 2, False), (128, 128, 32, 8, True), (64, 128, 32, 4, True)]:
            out = torch.empty((1, cout, To, Ho, Wo), dtype=dtype, device="cuda", memory_format=CL)
            grid = (To * Ho, triton.cdiv(Wo, BM), triton.cdiv(cout, BN))
            kern = conv3d_probe[grid](x, wcl, out, H, W, Ho, Wo, x.stride(2), x.stride(3), C=cin, N=cout, BM=BM, BN=BN, BK=BK,
                                      TAP_MAJOR=tap_major, OUT_DTYPE=tdtype, num_warps=warps)
            asm = kern.asm.get("ptx", "")
            mma = "wgmma" if "wgmma" in asm else ("mma.sync" if "mma.sync" in asm else "fma?")
            same = torch.equal(out, ref)
            frac = (out != ref).float().mean().item()
            t = triton.testing.do_bench(lambda: conv3d_probe[grid](x, wcl, out, H, W, Ho, Wo, x.stride(2), x.stride(3), C=cin, N=cout, BM=BM, BN=BN, BK=BK,
                                      TAP_MAJOR=tap_major, OUT_DTYPE=tdtype, num_warps=warps), warmup=5, rep=50)
            print(f"   BM{BM} BN{BN} BK{BK} w{warps} tap_major={tap_major} {mma:8s} equal={same} mismatch={frac:.2e} {t:.2f} ms", flush=True)
