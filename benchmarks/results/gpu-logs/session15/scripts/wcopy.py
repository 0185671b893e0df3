"""Microbench: ATen's channels-last weight copy vs launch_cat_pad_5d over an (O, I, 1, 1, K) view."""
import torch, triton
from torch_wanops.ops.cat_pad_5d import launch_cat_pad_5d

def ours(w):
    o, i = w.shape[:2]
    k = w[0, 0].numel()
    x = w.view(o, i, 1, 1, k)
    out, _ = launch_cat_pad_5d(x, None, [0] * 6, 0, (k * i, 1, k * i, k * i, i))
    fmt = torch.channels_last_3d if w.dim() == 5 else torch.channels_last
    ref_strides = torch.empty_like(w, memory_format=fmt).stride()
    return out.as_strided(w.shape, ref_strides)

for dtype in (torch.bfloat16, torch.float32):
    for shape in [(1024, 1024, 3, 3, 3), (512, 512, 3, 3, 3), (384, 384, 3, 3, 3), (192, 192, 3, 3, 3), (96, 96, 3, 3, 3),
                  (192, 384, 3, 3, 3), (512, 512, 3, 3), (384, 384, 3, 3), (192, 192, 3, 3), (3, 96, 3, 3, 3), (96, 192, 3, 3, 3)]:
        w = torch.randn(shape, device="cuda").to(dtype)
        fmt = torch.channels_last_3d if w.dim() == 5 else torch.channels_last
        ref = w.contiguous(memory_format=fmt)
        mine = ours(w)
        assert torch.equal(ref, mine) and ref.stride() == mine.stride(), shape
        t_aten = triton.testing.do_bench(lambda: w.contiguous(memory_format=fmt), warmup=50, rep=300)
        t_ours = triton.testing.do_bench(lambda: ours(w), warmup=50, rep=300)
        gb = 2 * w.numel() * w.element_size() / 1e9
        print(f"{str(dtype):15s} {str(shape):22s} aten {t_aten*1e3:7.1f} us ({gb/t_aten*1e3:5.0f} GB/s)  ours {t_ours*1e3:7.1f} us ({gb/t_ours*1e3:5.0f} GB/s)", flush=True)
