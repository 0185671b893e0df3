"""Session 27 (prepared in 26): the fused norm against its transposing copy at Wan2.2's bf16 shapes.
Prints one row per case: label, median ms, GB/s of the bytes moved, and a fingerprint of the output bits."""
import sys, torch, triton.testing
import torch_wanops  # noqa
import importlib
cp = importlib.import_module("torch_wanops.ops.cat_pad_5d")
rms = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")
from torch_wanops import ops
print(torch_wanops.__file__, torch.__version__, torch.cuda.get_device_name(), flush=True)
PAD = (1, 1, 1, 1, 2, 0)
weights = None
def fingerprint(t):
    global weights
    bits = t.contiguous().view(-1).view(torch.int16 if t.element_size() == 2 else torch.int32).long()
    if weights is None or weights.numel() < bits.numel():
        weights = (torch.arange(bits.numel() + 1024, device="cuda") % 65521) + 1
    return int((bits * weights[: bits.numel()]).sum())
def row(label, fn, nbytes):
    outs = fn()
    outs = outs if isinstance(outs, tuple) else (outs,)
    fp = [fingerprint(o) for o in outs]
    ms = triton.testing.do_bench(fn, return_mode="median")
    print(f"{label:<44} {ms:8.4f} ms {nbytes / ms / 1e6:6.0f} GB/s  {fp}", flush=True)
def gen(shape, dtype, seed, cl=False):
    g = torch.Generator("cuda").manual_seed(seed)
    t = torch.randn(shape, generator=g, device="cuda", dtype=torch.float32).to(dtype)
    return t.contiguous(memory_format=torch.channels_last_3d) if cl else t
for dtype in (torch.bfloat16,):
    name = "fp32" if dtype == torch.float32 else "bf16"
    for ch, fr, h, w in ((256, 4, 240, 416), (512, 4, 240, 416), (512, 4, 120, 208), (1024, 4, 120, 208), (1024, 4, 60, 104)):
        for raw in (False, True):
            x = gen((1, ch, fr, h, w), dtype, 0, raw)
            cache = gen((1, ch, 2, h, w), dtype, 1, True)
            gamma = gen((ch, 1, 1, 1), dtype, 2)
            bias = gen((ch,), dtype, 3) if raw else None
            norm = rms._channel_norm(x) if bias is None else rms.launch_channel_norm(x, bias)
            table = None if dtype == torch.float32 else rms.silu_table(x.device, dtype)
            pro = cp.NormPrologue(norm, gamma, float(ch) ** 0.5, True, table, bias, dtype == torch.float32)
            strides = rms._out_strides(x, cache, PAD, True)
            out_numel = ch * (fr + 2) * (h + 2) * (w + 2)
            nbytes = x.element_size() * (x.numel() + 2 * cache.numel() + out_numel)
            tag = f"{name} {ch}ch {fr}f {h}x{w} {'raw+bias' if raw else 'ncdhw'}"
            row(f"norm {tag}", lambda: cp.launch_cat_pad_5d(x, cache, PAD, 2, strides, pro), nbytes)
            if not raw:
                row(f"copy {tag} -> cl", lambda: cp.launch_cat_pad_5d(x, cache, PAD, 2, strides), nbytes)
                row(f"bias_add {tag} cl->ncdhw", lambda xc=x.contiguous(memory_format=torch.channels_last_3d),
                    b=gen((ch,), dtype, 3): ops.bias_add_contiguous(xc, b), 2 * x.numel() * x.element_size())
        if fr == 4 and ch > 96:
            x = gen((1, ch, fr, h, w), dtype, 4)
            row(f"upsample {name} {ch}ch {fr}f {h}x{w} cl", lambda: ops.upsample_nearest_2x(x, True),
                5 * x.numel() * x.element_size())
            x2 = gen((1, ch, fr, h, w), dtype, 4, True)
            row(f"copy {name} {ch}ch {fr}f {h}x{w} cl->cl", lambda: cp.launch_cat_pad_5d(
                x2, None, PAD, 2, rms._out_strides(x2, None, PAD, True)), 2 * x.numel() * x.element_size())
        torch.cuda.empty_cache()
