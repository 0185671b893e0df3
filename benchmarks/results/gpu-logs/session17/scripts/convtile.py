"""Session 17 probe D: conv3d_chunked's fp32 (TF32) kernel, NaN guard variants of its operand rounding and tiles."""
import sys
import types

import torch
import torch.nn.functional as F
import triton

sys.path.insert(0, ".")
from torch_wanops.decoder import _conv_kernels  # noqa: E402
from torch_wanops.ops.conv3d_chunked import rounded_to_tf32  # noqa: E402

CL = torch.channels_last_3d
GUARDS = {
    "float-where": None,
    "none": "    return bits.to(tl.float32, bitcast=True)\n",
    "int-where": "    return tl.where((value.to(tl.uint32, bitcast=True) & 0x7FFFFFFF) > 0x7F800000, value, bits.to(tl.float32, bitcast=True))\n",
}


def kernel_module(guard):
    rounding = open("csrc_triton/rounding.py").read()
    if GUARDS[guard]:
        rounding = rounding.replace("    return tl.where(value != value, value, bits.to(tl.float32, bitcast=True))\n", GUARDS[guard])
        assert GUARDS[guard] in rounding
    source = open("csrc_triton/conv3d_chunked.py").read().replace("from .rounding import round_to_tf32_grid\n", "")
    path = f"/tmp/conv_{guard.replace('-', '_')}.py"
    with open(path, "w") as f:
        f.write(rounding + "\n\n" + source)
    import importlib.util
    spec = importlib.util.spec_from_file_location(f"conv_{guard.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main():
    print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(), flush=True)
    g = torch.Generator().manual_seed(0)
    shape = (1, 96, 6, 482, 834)
    x = (torch.randn(shape, generator=g) * torch.exp2(torch.randint(-8, 9, shape, generator=g).float())).cuda().contiguous(memory_format=CL)
    w = (torch.randn(96, 96, 3, 3, 3, generator=g) * 0.05).cuda()
    with torch.no_grad():
        ref, kernels = _conv_kernels(lambda a: F.conv3d(a, w), x)
        cudnn_ms = triton.testing.do_bench(lambda: F.conv3d(x, w))
    print(f"cuDNN {cudnn_ms:.3f} ms {sorted(kernels)}", flush=True)
    wr = rounded_to_tf32(w.contiguous(memory_format=CL))
    out = torch.empty(ref.shape, device="cuda", memory_format=CL)
    positions = out.numel() // 96
    for guard in GUARDS:
        module = kernel_module(guard)
        for bm, bn1, bn2, warps, stages in [(256, 64, 32, 8, 3), (128, 64, 32, 8, 3), (128, 64, 32, 4, 4), (128, 64, 32, 4, 3),
                                            (256, 64, 32, 8, 4), (128, 64, 32, 8, 4), (64, 64, 32, 4, 4)]:
            grid = (triton.cdiv(positions, bm), 1)

            def launch():
                module.conv3d_chunked_kernel[grid](
                    x, wr, out, positions, *out.shape[1:], *x.stride(), *wr.stride(), IN_CHANNELS=96, KT=3, KH=3, KW=3,
                    CHUNK=32, DOT_IN_FP32=False, INDEX64=False, BLOCK_M=bm, BLOCK_N1=bn1, BLOCK_N2=bn2,
                    num_warps=warps, num_stages=stages)
            try:
                launch()
                ms = triton.testing.do_bench(launch)
                print(f"  {guard:11s} BM{bm} BN{bn1}+{bn2} w{warps} s{stages}: equal={torch.equal(out, ref)} {ms:.3f} ms "
                      f"({cudnn_ms / ms:.2f}x)", flush=True)
            except Exception as e:  # noqa: BLE001
                print(f"  {guard} BM{bm} w{warps} s{stages}: failed {type(e).__name__} {str(e)[:120]}", flush=True)


if __name__ == "__main__":
    main()
