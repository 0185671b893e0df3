"""Session 19: the 720x1280 fp32 geometries the decoder did not take: cuDNN's kernel, the verdict, the tail split, bits, times."""
import torch
import torch.nn.functional as F
import triton.testing

from torch_wanops import decoder as d
from torch_wanops.ops._common import rounded_to_tf32

for shape, cout in (((1, 384, 4, 182, 322), 384), ((1, 192, 3, 362, 642), 192), ((1, 192, 6, 362, 642), 192)):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = rounded_to_tf32(torch.randn(shape, device="cuda", generator=g)).contiguous(memory_format=torch.channels_last_3d)
    conv = torch.nn.Conv3d(shape[1], cout, 3, bias=False, device="cuda")
    with torch.no_grad():
        conv.weight.copy_(torch.randn(conv.weight.shape, device="cuda", generator=g) * 0.05)
        ref, kernels = d._conv_kernels(lambda a: F.conv3d(a, conv.weight), x)
        order = d._sums_in_chunk_order(kernels)
        tail = d._cudnn_tail_split(conv, x)
        out = d._chunked_conv(conv, x, order or d.ChunkedConv.TF32_GRID_ONLY, truncate_x=True)
        cudnn_ms = triton.testing.do_bench(lambda: F.conv3d(x, conv.weight), rep=100)
        op_ms = triton.testing.do_bench(lambda: d._chunked_conv(conv, x, order or d.ChunkedConv.TF32_GRID_ONLY, truncate_x=True), rep=100)
    print(f"{shape}->{cout}: order {order}, tail {tail}, equal {torch.equal(out, ref)} (differ {(out != ref).float().mean().item():.2e}), "
          f"cuDNN {cudnn_ms:.3f} ms, op {op_ms:.3f} ms; {sorted(k[:110] for k in kernels)}", flush=True)
