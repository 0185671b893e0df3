"""conv3d_chunked's launch tiles at one conv geometry, each checked for the default tile's bits.

The tile (positions x output channels per program, warps, pipeline stages) keeps the K order
(32-channel chunks outside, taps inside), but whether a dot's result depends on its shape is the
device's matter (the interpreter's numpy dot does: 128 x 128 differs from 64 + 32 there), so each
tile's output is compared with the default tile's (``torch.equal``) and timed (median, ``triton.testing.do_bench`` on
CUDA). fp32 x is put on the TF32 grid and read as loaded (``truncate_x``), as the decoder feeds
the op; cuDNN's time for the same conv is printed beside it.

    python benchmarks/sweep_conv_tiles.py [--shape 1 96 6 722 1282] [--out-channels 96] [--dtype fp32]
    TRITON_INTERPRET=1 python benchmarks/sweep_conv_tiles.py --device cpu --shape 1 32 3 6 8 --out-channels 96
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops import _backend  # noqa: E402
from torch_wanops.bench import DTYPES, median_ms  # noqa: E402
from torch_wanops.ops import conv3d_chunked  # noqa: E402
from torch_wanops.ops._common import rounded_to_tf32  # noqa: E402

# (BLOCK_M, BLOCK_N1, BLOCK_N2, num_warps, num_stages) to try besides the default tile.
TILES = [
    (128, 64, 32, 8, 3), (128, 64, 32, 8, 4), (256, 64, 32, 8, 3), (64, 64, 32, 4, 4),
    (128, 128, 0, 8, 3), (128, 128, 0, 8, 4), (256, 128, 0, 8, 3), (64, 128, 0, 4, 4),
    (128, 32, 64, 8, 3),
]
# For outputs of at most 16 channels (Wan2.2's 256 -> 12 head): one 16-wide block, fewer or more positions.
NARROW_TILES = [
    (64, 16, 0, 4, 3), (128, 16, 0, 4, 3), (128, 16, 0, 4, 4), (128, 16, 0, 8, 4), (256, 16, 0, 4, 3),
    (256, 16, 0, 8, 4), (256, 16, 0, 8, 5), (512, 16, 0, 8, 3), (512, 16, 0, 16, 3),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", type=int, nargs=5, default=[1, 96, 6, 722, 1282], help="x: B C T H W")
    parser.add_argument("--out-channels", type=int, default=96)
    parser.add_argument("--dtype", choices=DTYPES, default="fp32")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    dtype = DTYPES[args.dtype]
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(args.shape, generator=generator).to(args.device, dtype)
    x = x.contiguous(memory_format=torch.channels_last_3d)
    weight = (torch.randn(args.out_channels, args.shape[1], 3, 3, 3, generator=generator) * 0.05).to(args.device, dtype)
    truncate_x = dtype == torch.float32
    if truncate_x:
        x = rounded_to_tf32(x)
    out_shape = conv3d_chunked(x, weight).shape
    flops = 2 * out_shape.numel() * args.shape[1] * 27
    print(f"torch {torch.__version__}, triton {_backend.triton_version()}, {args.device} "
          f"{torch.cuda.get_device_name() if args.device == 'cuda' else ''}; x {tuple(args.shape)} {args.dtype} -> "
          f"{args.out_channels} channels", flush=True)
    with torch.no_grad():
        cudnn_ms = median_ms(lambda: F.conv3d(x, weight), args.device)
    print(f"{'F.conv3d (stock)':<36} {cudnn_ms:8.3f} ms {flops / cudnn_ms / 1e9:7.1f} TFLOP/s", flush=True)
    default_tile, expected = _backend.conv_tile, None
    # The default runs first (None); the table's copy of it would only time it again.
    candidates = NARROW_TILES if args.out_channels <= 16 else TILES
    tiles = [tile for tile in candidates if tile != default_tile(args.out_channels, dtype, False)]
    try:
        for tile in [None, *tiles]:
            if tile is not None:
                _backend.conv_tile = lambda *_, t=tile: t
            label = f"tile {tile or default_tile(args.out_channels, dtype, False)}{'' if tile else ' (default)'}"
            try:
                out = conv3d_chunked(x, weight, truncate_x=truncate_x)
            except Exception as error:  # noqa: BLE001  (a tile the compiler or the device refuses)
                print(f"{label:<34} failed: {type(error).__name__}: {str(error)[:100]}", flush=True)
                continue
            if expected is None:
                expected = out
            # A tile that changes the bits is timed too, and marked: it cannot be taken.
            bits = "same bits" if torch.equal(out, expected) else "OTHER BITS"
            ms = median_ms(lambda: conv3d_chunked(x, weight, truncate_x=truncate_x), args.device)
            print(f"{label:<36} {ms:8.3f} ms {flops / ms / 1e9:7.1f} TFLOP/s ({cudnn_ms / ms:.2f}x stock) {bits}",
                  flush=True)
    finally:
        _backend.conv_tile = default_tile


if __name__ == "__main__":
    main()
