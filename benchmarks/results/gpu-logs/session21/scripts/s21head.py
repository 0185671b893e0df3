"""session 21: which order does cuDNN's head conv (96 -> 3, the indexed 128x16x64 kernel in fp32) sum in? Arithmetic probe only."""
import torch, triton, triton.language as tl
import torch.nn.functional as F
from torch_wanops.decoder import _conv_kernels
from torch_wanops.ops._common import rounded_to_tf32

@triton.jit
def head_probe(x_ptr, w_ptr, out_ptr, positions, H_out, W_out, x_st, x_sh, x_sw,
               C: tl.constexpr, N: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               TAP_MAJOR: tl.constexpr, FP32: tl.constexpr):
    m = tl.program_id(0) * BM + tl.arange(0, BM)
    m_ok = m < positions
    m = tl.where(m_ok, m, 0)
    w_ = m % W_out
    h_ = (m // W_out) % H_out
    t_ = m // (W_out * H_out)
    base = t_ * x_st + h_ * x_sh + w_ * x_sw
    n = tl.arange(0, BN)
    k = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for step in range(27 * (C // BK)):
        if TAP_MAJOR:
            tap = step // (C // BK)
            c0 = (step % (C // BK)) * BK
        else:
            c0 = (step // 27) * BK
            tap = step % 27
        dt = tap // 9
        dh = (tap // 3) % 3
        dw = tap % 3
        a = tl.load(x_ptr + (base + dt * x_st + dh * x_sh + dw * x_sw)[:, None] + c0 + k[None, :], mask=m_ok[:, None], other=0.0)
        b = tl.load(w_ptr + n[None, :] * (27 * C) + tap * C + c0 + k[:, None], mask=(n < N)[None, :], other=0.0)
        if FP32:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc)
    tl.store(out_ptr + m[:, None] * N + n[None, :], acc.to(out_ptr.dtype.element_ty), mask=m_ok[:, None] & (n < N)[None, :])

def spread(shape, dtype, s, seed):
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(shape, generator=g) * torch.exp2(torch.randint(-s, s + 1, shape, generator=g).float())
    return v.to("cuda", dtype)

CL = torch.channels_last_3d
print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
for dtype, shape in ((torch.float32, (1, 96, 6, 482, 834)), (torch.float32, (1, 96, 6, 722, 1282)), (torch.float16, (1, 96, 6, 482, 834)), (torch.float32, (1, 96, 3, 482, 834))):
    x = spread(shape, dtype, 4, 0).contiguous(memory_format=CL)
    w = (spread((3, 96, 3, 3, 3), dtype, 4, 1).float() * 0.05).to(dtype)
    with torch.no_grad():
        ref, kernels = _conv_kernels(lambda a: F.conv3d(a, w), x)
    print(shape, dtype, "cuDNN", sorted(kernels), flush=True)
    xs, ws = (rounded_to_tf32(x), rounded_to_tf32(w)) if dtype == torch.float32 else (x, w)
    wcl = ws.contiguous(memory_format=CL)
    To, Ho, Wo = shape[2] - 2, shape[3] - 2, shape[4] - 2
    positions = To * Ho * Wo
    for BK, tap_major, BM, warps in ((32, True, 128, 4), (16, True, 128, 4), (32, False, 128, 4), (32, True, 64, 2)):
        out = torch.empty((1, 3, To, Ho, Wo), dtype=dtype, device="cuda", memory_format=CL)
        grid = (triton.cdiv(positions, BM),)
        run = lambda: head_probe[grid](xs, wcl, out, positions, Ho, Wo, xs.stride(2), xs.stride(3), xs.stride(4), C=96, N=3, BM=BM, BN=16, BK=BK,
                                       TAP_MAJOR=tap_major, FP32=dtype == torch.float32, num_warps=warps)
        run()
        ms = triton.testing.do_bench(run, warmup=3, rep=20)
        cud = triton.testing.do_bench(lambda: F.conv3d(x, w), warmup=3, rep=20)
        print(f"  BK{BK} tap_major={tap_major} BM{BM} w{warps}: equal={torch.equal(out, ref)} mismatch={(out != ref).float().mean().item():.2e} "
              f"{ms:.2f} ms (cuDNN {cud:.2f} ms)", flush=True)
