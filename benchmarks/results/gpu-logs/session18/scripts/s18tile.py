"""Session 18: conv3d_chunked reading TF32-grid fp32 x as loaded (truncate_x) against cuDNN and the rounding mode; tiles."""
import torch
import torch.nn.functional as F
import triton.testing

from torch_wanops import _backend
from torch_wanops.decoder import _conv_kernels, _sums_in_chunk_order
from torch_wanops.ops import conv3d_chunked
from torch_wanops.ops._common import rounded_to_tf32

CL = torch.channels_last_3d
print(torch.__version__, _backend.triton_version(), torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
default_tile = _backend.conv_tile
for shape, cout in (((1, 96, 6, 482, 834), 96), ((1, 384, 6, 122, 210), 384), ((1, 384, 4, 122, 210), 384),
                    ((1, 256, 6, 482, 834), 256), ((1, 192, 6, 242, 418), 96)):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(shape, device="cuda", generator=g).contiguous(memory_format=CL)
    w = torch.randn((cout, shape[1], 3, 3, 3), device="cuda", generator=g) * 0.05
    xr = rounded_to_tf32(x)
    with torch.no_grad():
        ref, kernels = _conv_kernels(lambda a: F.conv3d(a.contiguous(), w), x)
    cudnn_ms = triton.testing.do_bench(lambda: F.conv3d(x, w), rep=50)
    order = _sums_in_chunk_order(kernels)
    print(f"{shape}->{cout}: cuDNN {cudnn_ms:.3f} ms, chunk order {order!r}, {sorted(k[:90] for k in kernels)}", flush=True)
    round_ms = triton.testing.do_bench(lambda: conv3d_chunked(x, w), rep=50)
    print(f"   rounding mode (default tile): equal={torch.equal(conv3d_chunked(x, w), ref)} {round_ms:.3f} ms "
          f"({cudnn_ms / round_ms:.2f}x)", flush=True)
    tiles = [None, (128, 4), (256, 3), (64, 4)]
    for tile in tiles:
        if tile is not None:
            _backend.conv_tile = lambda n, d, r=False, t=tile: (t[0], *default_tile(n, d, r)[1:3], 8, t[1])
        try:
            out = conv3d_chunked(xr, w, truncate_x=True)
            ms = triton.testing.do_bench(lambda: conv3d_chunked(xr, w, truncate_x=True), rep=50)
            print(f"   truncate_x on grid x, tile {tile or 'default'} {_backend.conv_tile(cout, torch.float32, False)}: "
                  f"equal={torch.equal(out, ref)} {ms:.3f} ms ({cudnn_ms / ms:.2f}x)", flush=True)
        except Exception as e:  # noqa: BLE001
            print(f"   tile {tile}: failed {type(e).__name__}: {str(e)[:120]}", flush=True)
        finally:
            _backend.conv_tile = default_tile
    del x, w, xr, ref
    torch.cuda.empty_cache()
