import time, torch, torch.nn.functional as F
def timeit(fn, reps=10):
    fn(); torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(reps): fn()
    torch.cuda.synchronize(); return (time.perf_counter() - t) / reps * 1e3
torch.manual_seed(0)
cases = [(96, 96, 6, 482, 834), (192, 192, 6, 242, 418), (384, 384, 6, 122, 210), (384, 384, 3, 62, 106), (96, 3, 6, 482, 834), (1024, 1024, 3, 32, 54)]
for dtype in (torch.bfloat16, torch.float32):
    for cin, cout, t, h, w in cases:
        x = torch.randn(1, cin, t, h, w, device="cuda", dtype=dtype)
        wt = torch.randn(cout, cin, 3, 3, 3, device="cuda", dtype=dtype) * 0.05
        b = torch.randn(cout, device="cuda", dtype=dtype)
        ref = F.conv3d(x, wt, b)
        sep = F.conv3d(x, wt) + b.view(1, -1, 1, 1, 1)
        xcl = x.contiguous(memory_format=torch.channels_last_3d)
        wcl = wt.contiguous(memory_format=torch.channels_last_3d)
        cl_nob = F.conv3d(xcl, wt)
        cl = F.conv3d(xcl, wcl, b)
        print(dtype, (cin, cout, t, h, w), "bias-separate equal", torch.equal(ref, sep), "CL equal", torch.equal(cl, ref),
              "CL out strides CL", cl.is_contiguous(memory_format=torch.channels_last_3d),
              "ms: stock %.3f  nobias %.3f  CLin+NCweight nobias %.3f  CLin+CLw nobias %.3f  CLin+CLw+bias %.3f  bias add_ %.3f  CL->NC copy %.3f" % (
                  timeit(lambda: F.conv3d(x, wt, b)), timeit(lambda: F.conv3d(x, wt)), timeit(lambda: F.conv3d(xcl, wt)),
                  timeit(lambda: F.conv3d(xcl, wcl)), timeit(lambda: F.conv3d(xcl, wcl, b)),
                  timeit(lambda: ref.add_(b.view(1, -1, 1, 1, 1))), timeit(lambda: cl_nob.contiguous())), flush=True)
