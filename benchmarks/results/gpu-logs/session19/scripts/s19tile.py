"""Session 19: conv3d_chunked tiles on TF32-grid x at the segment_k_on geometries, against cuDNN."""
import torch
import torch.nn.functional as F
import triton.testing

from torch_wanops import _backend
from torch_wanops.decoder import _conv_kernels
from torch_wanops.ops import conv3d_chunked
from torch_wanops.ops._common import rounded_to_tf32

CL = torch.channels_last_3d
print(torch.__version__, _backend.triton_version(), torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
default_tile = _backend.conv_tile
for shape, cout, tiles in (
        ((1, 192, 6, 242, 418), 192, [None, (128, 128, 64, 8, 3), (128, 128, 64, 8, 4), (64, 128, 64, 4, 4), (256, 128, 64, 8, 3), (128, 128, 64, 4, 3)]),
        ((1, 192, 6, 362, 642), 192, [None, (128, 128, 64, 8, 3), (128, 128, 64, 8, 4)]),
        ((1, 384, 4, 122, 210), 384, [None, (128, 128, 0, 8, 3), (256, 128, 0, 8, 3), (128, 128, 64, 8, 3), (256, 128, 64, 8, 3), (128, 128, 64, 8, 4)]),
        ((1, 192, 4, 122, 210), 384, [None, (128, 128, 0, 8, 3), (256, 128, 0, 8, 3), (128, 128, 64, 8, 3), (256, 128, 64, 8, 3)]),
        ((1, 192, 6, 242, 418), 96, [None, (256, 64, 32, 8, 3), (128, 64, 32, 8, 4)]),
        ((1, 192, 3, 242, 418), 192, [None, (256, 128, 64, 8, 3), (128, 128, 64, 8, 4)])):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = rounded_to_tf32(torch.randn(shape, device="cuda", generator=g)).contiguous(memory_format=CL)
    w = torch.randn((cout, shape[1], 3, 3, 3), device="cuda", generator=g) * 0.05
    with torch.no_grad():
        ref, kernels = _conv_kernels(lambda a: F.conv3d(a, w), x)
    cudnn_ms = triton.testing.do_bench(lambda: F.conv3d(x, w), rep=100)
    print(f"{shape}->{cout}: cuDNN {cudnn_ms:.3f} ms {sorted(k[:100] for k in kernels)}", flush=True)
    for tile in tiles:
        if tile is not None:
            _backend.conv_tile = lambda n, d, r=False, t=tile: t
        try:
            out = conv3d_chunked(x, w, truncate_x=True)
            ms = triton.testing.do_bench(lambda: conv3d_chunked(x, w, truncate_x=True), rep=100)
            print(f"   tile {tile or 'default'}: differ {(out != ref).float().mean().item():.2e} {ms:.3f} ms ({cudnn_ms / ms:.2f}x)", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"   tile {tile}: failed {type(e).__name__}: {str(e)[:160]}", flush=True)
        finally:
            _backend.conv_tile = default_tile
    del x, w, ref
    torch.cuda.empty_cache()
