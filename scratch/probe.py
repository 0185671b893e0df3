"""Exactness probes for the norm+SiLU fusion (GPU)."""
import time, torch, triton, triton.language as tl
import torch.nn.functional as F
from triton.language.extra import libdevice
from diffusers.models.autoencoders.autoencoder_kl_wan import WanRMS_norm

@triton.jit
def norm_silu_kernel(x_ptr, norm_ptr, gamma_ptr, out_ptr, n, C, S, scale, SILU: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    s = i % S
    c = (i // S) % C
    b = i // (S * C)
    x = tl.load(x_ptr + i, mask=m).to(tl.float32)
    nrm = tl.load(norm_ptr + b * S + s, mask=m)
    nrm = tl.where(nrm < 1e-12, 1e-12, nrm)
    y = tl.math.div_rn(x, nrm).to(out_ptr.dtype.element_ty).to(tl.float32)
    y = (y * scale).to(out_ptr.dtype.element_ty).to(tl.float32)
    g = tl.load(gamma_ptr + c, mask=m).to(tl.float32)
    y = (y * g).to(out_ptr.dtype.element_ty).to(tl.float32)
    y = (y + 0.0).to(out_ptr.dtype.element_ty).to(tl.float32)
    if SILU:
        y = tl.math.div_rn(y, 1.0 + libdevice.exp(-y))
    tl.store(out_ptr + i, y.to(out_ptr.dtype.element_ty), mask=m)

def fused(x, gamma, scale, silu, norm):
    out = torch.empty_like(x)
    n = x.numel(); B, C = x.shape[:2]; S = n // (B * C)
    norm_silu_kernel[(triton.cdiv(n, 1024),)](x, norm, gamma, out, n, C, S, scale, SILU=silu, BLOCK=1024, enable_fp_fusion=False)
    return out

def timeit(fn, reps=10):
    fn(); torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(reps): fn()
    torch.cuda.synchronize(); return (time.perf_counter() - t) / reps * 1e3

torch.manual_seed(0)
shapes = [(1, 96, 4, 480, 832), (1, 192, 4, 240, 416), (1, 384, 4, 120, 208), (1, 384, 2, 60, 104), (1, 1024, 4, 60, 104), (1, 512, 3, 120, 208), (2, 256, 1, 30, 52), (1, 96, 1, 481, 833)]
for dtype in (torch.bfloat16, torch.float32, torch.float16):
    bad_norm = bad_fused = bad_fused_nf = 0
    for shape in shapes:
        x = (torch.randn(shape, device="cuda") * 3).to(dtype)
        mod = WanRMS_norm(shape[1], images=False).cuda().to(dtype)
        with torch.no_grad():
            mod.gamma.copy_(torch.randn_like(mod.gamma))
            ref_norm = F.silu(mod(x))
            ref_plain = mod(x)
        n1 = torch.linalg.vector_norm(x.float(), dim=1, keepdim=True)
        n2 = torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32)
        same_norm = torch.equal(n1, n2)
        bad_norm += not same_norm
        for silu, ref in ((True, ref_norm), (False, ref_plain)):
            out = fused(x, mod.gamma.detach(), mod.scale, silu, n1.contiguous())
            eq = torch.equal(out, ref)
            bad_fused += not eq
            if not eq:
                d = (out.float() - ref.float()).abs()
                print("MISMATCH", dtype, shape, "silu", silu, int((d > 0).sum()), float(d.max()))
        print(dtype, shape, "norm dtype= same:", same_norm,
              "t stock %.3f ms  norm(x.float) %.3f  norm(dtype=) %.3f  fused+norm %.3f" % (
                  timeit(lambda: F.silu(mod(x))), timeit(lambda: torch.linalg.vector_norm(x.float(), dim=1, keepdim=True)),
                  timeit(lambda: torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32)),
                  timeit(lambda: fused(x, mod.gamma.detach(), mod.scale, True, torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32)))), flush=True)
    print(dtype, "norm mismatches", bad_norm, "fused mismatches", bad_fused, flush=True)
# special values through silu
v = torch.tensor([0.0, -0.0, 1e-40, -1e-40, 88.7, -88.7, 100., -100., float("inf"), float("-inf"), float("nan")], device="cuda")
for dtype in (torch.float32, torch.bfloat16):
    x = v.to(dtype).view(1, -1, 1, 1, 1).expand(1, v.numel(), 1, 1, 2).contiguous()
    y = (torch.rand(1, 64, 1, 64, 64, device="cuda") * 200 - 100).to(dtype)
    for t in (x, y):
        n = torch.ones(1, 1, *t.shape[2:], device="cuda")
        g = torch.ones(t.shape[1], device="cuda", dtype=dtype)
        out = fused(t, g, 1.0, True, n)
        ref = F.silu((t.float().div(n)).to(dtype) * 1.0 * g.view(-1, 1, 1, 1) + 0.0)
        print("special", dtype, torch.equal(out, ref), "nan-equal", torch.equal(out.nan_to_num(), ref.nan_to_num()))
