"""Sweep a Triton implicit-GEMM conv3d in cuDNN's channel-chunk-major order: exactness vs cuDNN and speed."""
import itertools, sys, torch, triton, triton.language as tl
import torch.nn.functional as F
from torch_wanops.decoder import _conv_kernels

@triton.jit
def conv3d_kernel(x_ptr, w_ptr, out_ptr, M, T_out, H_out, W_out,
                  x_sb, x_st, x_sh, x_sw, N,
                  C: tl.constexpr, BM: tl.constexpr, BN1: tl.constexpr, BN2: tl.constexpr, BK: tl.constexpr,
                  OUT_DTYPE: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = pid * BM + tl.arange(0, BM)
    mask_m = offs_m < M
    m = tl.where(mask_m, offs_m, 0)
    w = m % W_out
    r = m // W_out
    h = r % H_out
    r = r // H_out
    t = r % T_out
    b = r // T_out
    base = b * x_sb + t * x_st + h * x_sh + w * x_sw
    offs_k = tl.arange(0, BK)
    offs_n1 = tl.arange(0, BN1)
    mask_n1 = offs_n1 < N
    acc1 = tl.zeros((BM, BN1), dtype=tl.float32)
    if BN2 > 0:
        offs_n2 = BN1 + tl.arange(0, BN2)
        mask_n2 = offs_n2 < N
        acc2 = tl.zeros((BM, BN2), dtype=tl.float32)
    for k in range(0, 27 * (C // BK)):
        chunk = k // 27
        tap = k % 27
        dt = tap // 9
        dh = (tap // 3) % 3
        dw = tap % 3
        a = tl.load(x_ptr + (base + dt * x_st + dh * x_sh + dw * x_sw + chunk * BK)[:, None] + offs_k[None, :],
                    mask=mask_m[:, None], other=0.0)
        wk = tap * C + chunk * BK + offs_k[:, None]
        b1 = tl.load(w_ptr + offs_n1[None, :] * (27 * C) + wk, mask=mask_n1[None, :], other=0.0)
        acc1 = tl.dot(a, b1, acc1)
        if BN2 > 0:
            b2 = tl.load(w_ptr + offs_n2[None, :] * (27 * C) + wk, mask=mask_n2[None, :], other=0.0)
            acc2 = tl.dot(a, b2, acc2)
    tl.store(out_ptr + offs_m[:, None] * N + offs_n1[None, :], acc1.to(OUT_DTYPE), mask=mask_m[:, None] & mask_n1[None, :])
    if BN2 > 0:
        tl.store(out_ptr + offs_m[:, None] * N + offs_n2[None, :], acc2.to(OUT_DTYPE), mask=mask_m[:, None] & mask_n2[None, :])

CL = torch.channels_last_3d
TL = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16}

def probe(shape, dtype, spread=8):
    v = torch.randn(shape, device="cuda") * torch.exp2(torch.randint(-spread, spread + 1, shape, device="cuda").float())
    return v.to(dtype)

def ours(x, wcl, n, BM, BN1, BN2, warps, stages):
    B, C, T, H, W = x.shape
    To, Ho, Wo = T - 2, H - 2, W - 2
    out = torch.empty((B, n, To, Ho, Wo), dtype=x.dtype, device=x.device, memory_format=CL)
    M = B * To * Ho * Wo
    conv3d_kernel[(triton.cdiv(M, BM),)](x, wcl, out, M, To, Ho, Wo, x.stride(0), x.stride(2), x.stride(3), x.stride(4), n,
                                         C=C, BM=BM, BN1=BN1, BN2=BN2, BK=32, OUT_DTYPE=TL[x.dtype], num_warps=warps, num_stages=stages)
    return out

full = len(sys.argv) > 1
for (cin, cout, T, H, W) in [(96, 96, 6, 482, 834), (96, 3, 6, 482, 834), (96, 96, 3, 482, 834)]:
    for dtype in (torch.bfloat16, torch.float16):
        torch.manual_seed(2)
        x = probe((1, cin, T, H, W), dtype).contiguous(memory_format=CL)
        w = (probe((cout, cin, 3, 3, 3), dtype).float() * 0.05).to(dtype)
        if dtype == torch.float16:
            x = (x.float() * 2**-8).to(dtype); w = (w.float() * 2**-8).to(dtype)
        ref, k = _conv_kernels(lambda a: F.conv3d(a, w), x)
        tref = triton.testing.do_bench(lambda: F.conv3d(x, w), warmup=10, rep=100)
        print(f"{cin}->{cout} {T}x{H}x{W} {dtype}: cuDNN {tref:.3f} ms {sorted(k)}", flush=True)
        wcl = w.contiguous(memory_format=CL)
        splits = [(64, 32), (128, 0)] if cout == 96 else [(16, 0), (32, 0)]
        if cout == 96 and T == 3 or not full and T == 3:
            configs = [(128, 64, 32, 4, 3), (128, 64, 32, 8, 3)]
        else:
            configs = [(bm, b1, b2, wp, st) for (b1, b2) in splits for bm in (64, 128, 256) for wp in (4, 8) for st in (2, 3, 4)
                       if not (bm == 256 and wp == 4) and not (bm == 64 and wp == 8)]
        for (bm, b1, b2, wp, st) in configs:
            try:
                out = ours(x, wcl, cout, bm, b1, b2, wp, st)
                same = torch.equal(out, ref) and out.stride() == ref.stride()
                t = triton.testing.do_bench(lambda: ours(x, wcl, cout, bm, b1, b2, wp, st), warmup=10, rep=100)
                print(f"   BM{bm} BN{b1}+{b2} w{wp} s{st}: equal={same} {t:.3f} ms ({tref / t:.2f}x)", flush=True)
            except Exception as e:
                print(f"   BM{bm} BN{b1}+{b2} w{wp} s{st}: {type(e).__name__} {str(e)[:100]}", flush=True)
        del x, ref
        torch.cuda.empty_cache()
