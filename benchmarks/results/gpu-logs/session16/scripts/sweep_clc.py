"""Session 16: channels_last_copy launch tiles at the decoders' weight shapes, against ATen's copy."""
import itertools
import torch, triton
from torch_wanops.ops import channels_last_copy
from torch_wanops.ops.channels_last_copy import _kernels

SHAPES = [(1024, 1024, 3, 3, 3), (512, 1024, 3, 3, 3), (2048, 1024, 3, 1, 1), (512, 512, 3, 3, 3), (512, 512, 3, 3),
          (384, 384, 3, 3, 3), (192, 192, 3, 3, 3), (96, 96, 3, 3, 3), (1024, 1024, 3, 3)]

def launch(w, block_c, block_s, warps):
    layout = torch.channels_last_3d if w.dim() == 5 else torch.channels_last
    out = torch.empty(w.shape, dtype=w.dtype, device=w.device, memory_format=layout)
    n, c = w.shape[:2]
    s = w.numel() // (n * c)
    cb, sb = -(-c // block_c), -(-s // block_s)
    _kernels.channels_last_copy_kernel[(n * cb * sb,)](w, out, c, s, cb, sb, INDEX64=False, BLOCK_C=block_c,
                                                        BLOCK_S=block_s, num_warps=warps)
    return out

for dtype in (torch.bfloat16, torch.float32):
    for shape in SHAPES:
        w = torch.randn(shape, device="cuda").to(dtype)
        layout = torch.channels_last_3d if w.dim() == 5 else torch.channels_last
        ref = w.contiguous(memory_format=layout)
        gb = 2 * w.numel() * w.element_size() / 1e9
        t_aten = triton.testing.do_bench(lambda: w.contiguous(memory_format=layout), warmup=25, rep=200)
        t_op = triton.testing.do_bench(lambda: channels_last_copy(w), warmup=25, rep=200)
        assert torch.equal(channels_last_copy(w), ref) and channels_last_copy(w).stride() == ref.stride()
        best = []
        for block_c, block_s, warps in itertools.product((16, 32, 64, 128, 256), (4, 16, 32, 64), (2, 4, 8)):
            if block_c * block_s > 16384 or block_c * block_s < 512:
                continue
            out = launch(w, block_c, block_s, warps)
            assert torch.equal(out, ref), (block_c, block_s, warps)
            t = triton.testing.do_bench(lambda: launch(w, block_c, block_s, warps), warmup=10, rep=60)
            best.append((t, block_c, block_s, warps))
        best.sort()
        tops = " ".join(f"{bc}x{bs}/{wp} {t*1e3:.1f}us" for t, bc, bs, wp in best[:4])
        print(f"{str(dtype):15s} {str(shape):22s} aten {t_aten*1e3:7.1f} us ({gb/t_aten*1e3:5.0f} GB/s)  "
              f"op {t_op*1e3:7.1f} us ({gb/t_op*1e3:5.0f} GB/s)  best: {tops}", flush=True)
