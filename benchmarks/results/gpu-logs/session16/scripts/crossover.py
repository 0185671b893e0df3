"""Session 16: conv3d_chunked against cuDNN's conv by size (Wan2.1's 96 -> 96 conv, later chunk): where does it pay?"""
import torch, triton
import torch.nn.functional as F
from torch_wanops.ops import conv3d_chunked

for dtype in (torch.bfloat16, torch.float16):
    for frames, height, width in [(4, 32, 64), (4, 64, 128), (4, 96, 160), (4, 128, 256), (4, 192, 320), (4, 256, 512),
                                  (1, 480, 832), (2, 480, 832)]:
        x = torch.randn(1, 96, frames + 2, height + 2, width + 2, device="cuda", dtype=dtype)
        x = x.contiguous(memory_format=torch.channels_last_3d)
        w = torch.randn(96, 96, 3, 3, 3, device="cuda", dtype=dtype)
        t_cudnn = triton.testing.do_bench(lambda: F.conv3d(x, w), warmup=10, rep=100)
        t_chunked = triton.testing.do_bench(lambda: conv3d_chunked(x, w), warmup=10, rep=100)
        positions = frames * height * width
        print(f"{str(dtype):15s} out {frames}x{height}x{width} ({positions:8d} positions): cuDNN {t_cudnn*1e3:8.1f} us, "
              f"chunked {t_chunked*1e3:8.1f} us ({t_cudnn/t_chunked:.2f}x)", flush=True)
