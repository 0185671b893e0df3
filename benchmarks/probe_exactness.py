"""Exactness facts the lossless levers rest on, measured at the decoder's shapes (CUDA).

    python benchmarks/probe_exactness.py

1. ``vector_norm(x, dim=1, dtype=float32)`` on fp16/bf16 x gives the bits of
   ``vector_norm(x.float(), dim=1)`` (the fused norm skips the fp32 copy), for contiguous x
   and for x stored frame-major as the upsamplers leave it; and whether the norm of a
   contiguous x has the bits of the norm of the same values stored frame-major (what
   ``decoder.CONTIGUOUS_UPSAMPLER_OUTPUTS`` rests on: stock reduces them frame-major).
2. ``rms_norm_cat_pad_5d`` equals stock ``SiLU(WanRMS_norm(x))`` + pad, with timings.
3. ``conv3d(x, w, b) == conv3d(x, w) + b`` and channels_last_3d inputs give the same
   bits as NCDHW (the conv-bias fold and channels-last conv-input levers), with timings.
"""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from diffusers.models.autoencoders.autoencoder_kl_wan import WanRMS_norm
from triton.testing import do_bench

from torch_wanops.ops import rms_norm_cat_pad_5d

NORM_SHAPES = [(1, 96, 4, 480, 832), (1, 192, 4, 240, 416), (1, 384, 4, 120, 208), (1, 384, 2, 60, 104),
               (1, 1024, 4, 60, 104), (1, 512, 3, 120, 208), (2, 256, 1, 30, 52)]
CONV_SHAPES = [(96, 96, 6, 482, 834), (192, 192, 6, 242, 418), (384, 384, 6, 122, 210), (384, 384, 3, 62, 106),
               (96, 3, 6, 482, 834), (1024, 1024, 3, 32, 54)]
CL = torch.channels_last_3d


def upcast_in_reduction_exact(x: torch.Tensor) -> bool:
    return torch.equal(torch.linalg.vector_norm(x.float(), dim=1, keepdim=True),
                       torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32))


def probe_norm(dtype: torch.dtype) -> None:
    for shape in NORM_SHAPES:
        x = (torch.randn(shape, device="cuda") * 3).to(dtype)
        norm = WanRMS_norm(shape[1], images=False).cuda().to(dtype)
        with torch.no_grad():
            norm.gamma.copy_(torch.randn_like(norm.gamma))
            stock = F.pad(nn.SiLU()(norm(x)), (1, 1, 1, 1, 2, 0))
            fused = rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, None, (1, 1, 1, 1, 2, 0))[0]
            same_norm = upcast_in_reduction_exact(x)
            x_frame_major = x.transpose(1, 2).contiguous().transpose(1, 2)
            same_norm_frame_major = upcast_in_reduction_exact(x_frame_major)
            same_norm_across_layouts = torch.equal(torch.linalg.vector_norm(x.float(), dim=1, keepdim=True),
                                                   torch.linalg.vector_norm(x_frame_major.float(), dim=1, keepdim=True))
            copy_ms = do_bench(lambda: torch.linalg.vector_norm(x_frame_major.float(), dim=1, keepdim=True))
            upcast_ms = do_bench(lambda: torch.linalg.vector_norm(x_frame_major, dim=1, keepdim=True,
                                                                  dtype=torch.float32))
            stock_ms = do_bench(lambda: F.pad(nn.SiLU()(norm(x)), (1, 1, 1, 1, 2, 0)))
            fused_ms = do_bench(lambda: rms_norm_cat_pad_5d(x, norm.gamma, norm.scale, True, None, (1, 1, 1, 1, 2, 0)))
        print(f"{str(dtype):15} {str(shape):24} norm(dtype=) exact {same_norm!s:5} fused exact "
              f"{torch.equal(stock, fused)!s:5} stock {stock_ms:.3f} ms fused {fused_ms:.3f} ms; frame-major "
              f"norm(dtype=) exact {same_norm_frame_major!s:5} {copy_ms:.3f} -> {upcast_ms:.3f} ms; contiguous norm "
              f"= frame-major norm {same_norm_across_layouts!s:5}", flush=True)


def probe_conv(dtype: torch.dtype) -> None:
    for cin, cout, t, h, w in CONV_SHAPES:
        x = torch.randn(1, cin, t, h, w, device="cuda", dtype=dtype)
        weight = torch.randn(cout, cin, 3, 3, 3, device="cuda", dtype=dtype) * 0.05
        bias = torch.randn(cout, device="cuda", dtype=dtype)
        x_cl = x.contiguous(memory_format=CL)
        stock = F.conv3d(x, weight, bias)
        bias_apart = torch.equal(stock, F.conv3d(x, weight) + bias.view(1, -1, 1, 1, 1))
        channels_last = torch.equal(stock, F.conv3d(x_cl, weight, bias))
        times = {
            "stock": do_bench(lambda: F.conv3d(x, weight, bias)),
            "no bias": do_bench(lambda: F.conv3d(x, weight)),
            "CL input, no bias": do_bench(lambda: F.conv3d(x_cl, weight)),
            "bias add_": do_bench(lambda: stock.add_(bias.view(1, -1, 1, 1, 1))),
        }
        print(f"{str(dtype):15} conv {cin}->{cout} {t}x{h}x{w}: bias apart exact {bias_apart!s:5} CL exact "
              f"{channels_last!s:5} " + " ".join(f"{k} {v:.3f} ms" for k, v in times.items()), flush=True)


def main() -> None:
    torch.manual_seed(0)
    for dtype in (torch.bfloat16, torch.float16, torch.float32):
        probe_norm(dtype)
    for dtype in (torch.bfloat16, torch.float32):
        probe_conv(dtype)


if __name__ == "__main__":
    main()
