"""Which cuDNN kernels give stock's bits for the 96-channel conv, and how fast: channels-last, benchmark mode, zero-padded channels."""
import torch, triton
import torch.nn.functional as F
from torch_wanops.decoder import _conv_kernels

torch.manual_seed(0)
CL = torch.channels_last_3d

def probe(shape, dtype):
    v = torch.randn(shape, device="cuda") * torch.exp2(torch.randint(-12, 12, shape, device="cuda").float())
    return v.to(dtype)

def run(name, fn, x, ref, bench):
    with torch.backends.cudnn.flags(enabled=True, benchmark=bench, deterministic=False, allow_tf32=True):
        fn(x); torch.cuda.synchronize()
        out, kernels = _conv_kernels(fn, x)
        t = triton.testing.do_bench(lambda: fn(x), warmup=20, rep=200)
    same = torch.equal(out, ref)
    diff = (out.float() - ref.float()).abs().max().item()
    print(f"  {name:34s} {t:7.3f} ms equal={same} maxdiff={diff:.3g} kernels={sorted(kernels)}", flush=True)

for (cin, cout, t, h, w) in [(96, 96, 6, 482, 834), (192, 192, 6, 242, 418), (384, 384, 4, 122, 210), (96, 3, 6, 482, 834)]:
  for dtype in (torch.bfloat16,):
    x = probe((1, cin, t, h, w), dtype)
    wt = probe((cout, cin, 3, 3, 3), dtype) * 0.05
    wt = wt.to(dtype)
    with torch.backends.cudnn.flags(enabled=True, benchmark=False, deterministic=False, allow_tf32=True):
        ref = F.conv3d(x, wt)
        _, k = _conv_kernels(lambda a: F.conv3d(a, wt), x)
        tref = triton.testing.do_bench(lambda: F.conv3d(x, wt), warmup=20, rep=200)
    print(f"{cin}->{cout} {t}x{h}x{w} {dtype}: stock {tref:.3f} ms kernels={sorted(k)}", flush=True)
    xcl = x.contiguous(memory_format=CL)
    run("channels-last", lambda a: F.conv3d(a, wt), xcl, ref, False)
    run("channels-last benchmark", lambda a: F.conv3d(a, wt), xcl, ref, True)
    for pad_in in (128,) if cin == 96 else ():
        xp = torch.empty((1, pad_in, t, h, w), dtype=dtype, device="cuda", memory_format=CL).zero_()
        xp[:, :cin] = x
        wp = torch.zeros((cout, pad_in, 3, 3, 3), dtype=dtype, device="cuda")
        wp[:, :cin] = wt
        run(f"cin padded {pad_in}", lambda a: F.conv3d(a, wp), xp, ref, False)
        run(f"cin padded {pad_in} benchmark", lambda a: F.conv3d(a, wp), xp, ref, True)
        if cout == 96:
            wpp = torch.zeros((128, pad_in, 3, 3, 3), dtype=dtype, device="cuda")
            wpp[:cout, :cin] = wt
            run("cin+cout padded 128", lambda a: F.conv3d(a, wpp)[:, :cout], xp, ref, False)
            run("cin+cout padded 128 benchmark", lambda a: F.conv3d(a, wpp)[:, :cout], xp, ref, True)
            wo = torch.zeros((128, cin, 3, 3, 3), dtype=dtype, device="cuda")
            wo[:cout] = wt
            run("cout padded 128", lambda a: F.conv3d(a, wo)[:, :cout], xcl, ref, False)
    del x, xcl, ref
    torch.cuda.empty_cache()
