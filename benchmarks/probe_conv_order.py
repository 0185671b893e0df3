"""Does conv3d_chunked give cuDNN's bits, and how fast, at the decoder's conv geometries (CUDA)?

    python benchmarks/probe_conv_order.py [--dtypes bf16 fp16 fp32] [--spread 8]

Per geometry and dtype (fp32 with cuDNN's TF32, PyTorch's default): the cuDNN kernel stock's conv runs (and whether it is of the families whose
order the chunked kernel follows, ``decoder._sums_in_chunk_order``), whether ``conv3d_chunked``
equals it on values spread over 2**+-spread, and both times (median, ``triton.testing.do_bench``).
Session 15's order probe (a taps-outside order differing in ~1.5e-3 of the outputs) and its tile
sweep are archived in ``results/gpu-logs/session15/scripts`` (convprobe.py, convfast.py).
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops import decoder as decoder_module  # noqa: E402
from torch_wanops.bench import DTYPES  # noqa: E402
from torch_wanops.ops import conv3d_chunked  # noqa: E402

# (input shape, output channels): Wan2.1's 96-channel convs at 480x832 (4-frame chunk, first chunk,
# head), at 240x416, and a batch of 2.
GEOMETRIES = [
    ((1, 96, 6, 482, 834), 96),
    ((1, 96, 3, 482, 834), 96),
    ((1, 96, 6, 482, 834), 3),
    ((1, 96, 6, 242, 418), 96),
    ((2, 96, 4, 34, 66), 96),
]


def spread_values(shape: tuple, dtype: torch.dtype, spread: int, seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator)
    values *= torch.exp2(torch.randint(-spread, spread + 1, shape, generator=generator).float())
    return values.to(device="cuda", dtype=dtype)


def main() -> None:
    import triton

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dtypes", nargs="+", default=["bf16", "fp16", "fp32"], choices=["bf16", "fp16", "fp32"])
    parser.add_argument("--spread", type=int, default=8)
    args = parser.parse_args()
    print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())
    for dtype_name in args.dtypes:
        dtype = DTYPES[dtype_name]
        for shape, out_channels in GEOMETRIES:
            x = spread_values(shape, dtype, args.spread, 0).contiguous(memory_format=torch.channels_last_3d)
            weight = (spread_values((out_channels, shape[1], 3, 3, 3), dtype, args.spread, 1).float() * 0.05).to(dtype)
            with torch.no_grad():
                stock, kernels = decoder_module._conv_kernels(lambda a: F.conv3d(a, weight), x)  # noqa: B023
                chunked = conv3d_chunked(x, weight)
                cudnn_ms = triton.testing.do_bench(lambda: F.conv3d(x, weight))  # noqa: B023
                chunked_ms = triton.testing.do_bench(lambda: conv3d_chunked(x, weight))  # noqa: B023
            family = decoder_module._sums_in_chunk_order(kernels)
            print(f"{dtype_name} {shape} -> {out_channels}: equal={torch.equal(chunked, stock)} "
                  f"chunk-order kernel={family} cuDNN {cudnn_ms:.3f} ms, chunked {chunked_ms:.3f} ms "
                  f"({cudnn_ms / chunked_ms:.2f}x); cuDNN ran {sorted(kernels)}", flush=True)


if __name__ == "__main__":
    main()
