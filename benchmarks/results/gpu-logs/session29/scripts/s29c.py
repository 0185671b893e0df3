"""Session 29 C: a timing prototype, not an exact kernel. One pass from a residual block's raw conv2 output
to the next block's conv1 input: x_next = (o + bias) + residual written NCDHW (the next residual), its channel
norm, the norm, SiLU by table, the padded channels-last conv input with the cached frames and border, and the
next cache. A program holds every channel of BLOCK_W columns of one output line, in two loops over channel
chunks (sums of squares, then the norm from x_next re-read while in L2). Against today's two launches
(bias_add_contiguous, then rms_norm_cat_pad_5d, which reduces the norm with ATen first), at Wan2.2's shapes.
Its sums are not in ATen's order (values are checked to a tolerance only): this measures what the pass
structure could save, not a lever."""
import argparse, os, sys
import torch
import triton
import triton.language as tl

import torch_wanops
from torch_wanops.ops import bias_add_contiguous, rms_norm_cat_pad_5d
import importlib
rms_module = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")


@triton.jit
def round_bf16(v):
    return v.to(tl.bfloat16).to(tl.float32)


@triton.jit
def transition_kernel(o_ptr, res_ptr, bias_ptr, gamma_ptr, table_ptr, cache_ptr, out_ptr, keep_ptr, xn_ptr, scale,
                      C, T, H, W,
                      o_sb, o_sc, o_st, o_sh, o_sw, r_sb, r_sc, r_st, r_sh, r_sw,
                      c_sb, c_sc, c_st, c_sh, c_sw, u_sb, u_sc, u_st, u_sh, u_sw,
                      k_sb, k_sc, k_st, k_sh, k_sw, n_sb, n_sc, n_st, n_sh, n_sw,
                      BLOCK_C: tl.constexpr, BLOCK_W: tl.constexpr):
    # Output (B, C, 2 + T, H + 2, W + 2), channels-last; lines (b, ot, oh), width blocks fastest.
    W_out = W + 2
    w_blocks = tl.cdiv(W_out, BLOCK_W)
    pid = tl.program_id(0)
    wb = pid % w_blocks
    line_s = pid // w_blocks
    new_frames_line = (line_s // (H + 2)) % (T + 2) >= 2
    interior_row = (line_s % (H + 2) >= 1) & (line_s % (H + 2) <= H)
    # (1, 1) tensors, not scalars, in the masks: the interpreter rejects a scalar boolean broadcast into a mask.
    line = line_s + tl.zeros((1, 1), tl.int32)
    oh = line % (H + 2)
    rest = line // (H + 2)
    ot = rest % (T + 2)
    b = rest // (T + 2)
    ih = oh - 1
    ow = wb * BLOCK_W + tl.arange(0, BLOCK_W)[None, :]
    iw = ow - 1
    col_in = (ow >= 1) & (ow <= W) & (ih >= 0) & (ih < H)
    col_out = ow < W_out
    cc = tl.arange(0, BLOCK_C)[:, None]
    it = ot - 2
    if new_frames_line & interior_row:
        sums = tl.zeros((1, BLOCK_W), tl.float32)
        for c0 in range(0, C, BLOCK_C):
            c = c0 + cc
            m = (c < C) & col_in
            o = tl.load(o_ptr + b * o_sb + c * o_sc + it * o_st + ih * o_sh + iw * o_sw, mask=m, other=0).to(tl.float32)
            r = tl.load(res_ptr + b * r_sb + c * r_sc + it * r_st + ih * r_sh + iw * r_sw, mask=m, other=0).to(tl.float32)
            bias = tl.load(bias_ptr + c, mask=c < C, other=0).to(tl.float32)
            x = round_bf16(round_bf16(o + bias) + r)
            tl.store(xn_ptr + b * n_sb + c * n_sc + it * n_st + ih * n_sh + iw * n_sw, x.to(tl.bfloat16), mask=m)
            sums += tl.sum(x * x, axis=0)[None, :]
        norm = tl.sqrt(sums)
        norm = tl.where(norm < 1e-12, 1e-12, norm)
        for c0 in range(0, C, BLOCK_C):
            c = c0 + cc
            m = (c < C) & col_in
            x = tl.load(xn_ptr + b * n_sb + c * n_sc + it * n_st + ih * n_sh + iw * n_sw, mask=m, other=0).to(tl.float32)
            gamma = tl.load(gamma_ptr + c, mask=c < C, other=0).to(tl.float32)
            y = round_bf16(tl.math.div_rn(x, norm))
            y = round_bf16(round_bf16(y * scale) * gamma) + 0.0
            bits = y.to(tl.bfloat16).to(tl.int16, bitcast=True).to(tl.int32) & 0xFFFF
            y = tl.load(table_ptr + bits)
            y = tl.where(m, y, 0.0).to(tl.bfloat16)
            tl.store(out_ptr + b * u_sb + c * u_sc + ot * u_st + oh * u_sh + ow * u_sw, y, mask=(c < C) & col_out)
            kt = ot - T
            tl.store(keep_ptr + b * k_sb + c * k_sc + kt * k_st + ih * k_sh + iw * k_sw, y, mask=m & (kt >= 0))
    else:
        for c0 in range(0, C, BLOCK_C):
            c = c0 + cc
            m = (c < C) & col_in & (ot < 2)
            v = tl.load(cache_ptr + b * c_sb + c * c_sc + ot * c_st + ih * c_sh + iw * c_sw, mask=m, other=0)
            tl.store(out_ptr + b * u_sb + c * u_sc + ot * u_st + oh * u_sh + ow * u_sw, v, mask=(c < C) & col_out)


def prototype(o, res, bias, gamma, scale, cache, block_c, block_w):
    B, C, T, H, W = o.shape
    cl = torch.channels_last_3d
    out = torch.empty((B, C, T + 2, H + 2, W + 2), dtype=o.dtype, device=o.device, memory_format=cl)
    keep = torch.empty((B, C, 2, H, W), dtype=o.dtype, device=o.device, memory_format=cl)
    xn = torch.empty_like(o, memory_format=torch.contiguous_format)
    table = rms_module.silu_table(o.device, o.dtype)
    grid = (B * (T + 2) * (H + 2) * triton.cdiv(W + 2, block_w),)
    transition_kernel[grid](o, res, bias, gamma.view(-1), table, cache, out, keep, xn, scale, C, T, H, W,
                            *o.stride(), *res.stride(), *cache.stride(), *out.stride(), *keep.stride(), *xn.stride(),
                            BLOCK_C=block_c, BLOCK_W=block_w, num_warps=4)
    return out, keep, xn


def today(o, res, bias, gamma, scale, cache):
    xn = bias_add_contiguous(o, bias, res)
    out, keep = rms_norm_cat_pad_5d(xn, gamma, scale, True, cache, [1, 1, 1, 1, 2, 0], 2, True)
    return out, keep, xn


def case(C, T, H, W, device):
    g = torch.Generator(device).manual_seed(0)
    cl = torch.channels_last_3d
    o = torch.randn((1, C, T, H, W), generator=g, device=device).to(torch.bfloat16).contiguous(memory_format=cl)
    res = torch.randn((1, C, T, H, W), generator=g, device=device).to(torch.bfloat16)
    cache = torch.randn((1, C, 2, H, W), generator=g, device=device).to(torch.bfloat16).contiguous(memory_format=cl)
    bias = torch.randn(C, generator=g, device=device).to(torch.bfloat16)
    gamma = (1 + 0.1 * torch.randn((C, 1, 1, 1), generator=g, device=device)).to(torch.bfloat16)
    return o, res, bias, gamma, float(C) ** 0.5, cache


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--shapes", nargs="+", default=["256,4,240,416", "512,4,120,208", "512,4,240,416", "1024,4,60,104"])
    p.add_argument("--tiles", nargs="+", default=["64,32", "32,64", "128,16", "64,64"])
    p.add_argument("--cudagraph", action="store_true", help="time replays of a CUDA graph: GPU time without launch cost")
    a = p.parse_args()
    bench = (lambda fn: triton.testing.do_bench_cudagraph(fn, rep=200)) if a.cudagraph else (
        lambda fn: triton.testing.do_bench(fn, warmup=25, rep=200))
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name() if a.device == "cuda" else "cpu", flush=True)
    for shape in a.shapes:
        C, T, H, W = (int(v) for v in shape.split(","))
        args = case(C, T, H, W, a.device)
        ref = today(*args)
        line = f"{C}ch {T}x{H}x{W}:"
        if a.device == "cuda":
            t_today = bench(lambda: today(*args))
            line += f" today {t_today:.4f} ms"
        for tile in a.tiles:
            bc, bw = (int(v) for v in tile.split(","))
            got = prototype(*args, bc, bw)
            worst = max((g.float() - r.float()).abs().max().item() for g, r in zip(got, ref))
            line += f" | {bc}x{bw}: diff {worst:.3g}"
            if a.device == "cuda":
                t = bench(lambda: prototype(*args, bc, bw))
                line += f" {t:.4f} ms ({t_today / t:.2f}x)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
