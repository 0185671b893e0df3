"""Session 42 probe: Wan2.2's head conv (256 -> 12, bf16, 6x242x418) on 2-D spatial tiles.

The same K order as conv3d_chunked (32-channel chunks outside, taps inside, one tl.dot of 32
channels per step), each program owning BH x BW output positions of one frame, so that the nine
(row, column) taps of a chunk and frame offset read the same halo: with loads cached in L1 they
need not come from L2 27 times. Compared with conv3d_chunked (cuDNN's bits) and timed.

    python .gpu/s42_head.py            # GPU
    python .gpu/s42_head.py --ptx      # CPU: compile for sm_90, count cp.async kinds
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@triton.jit
def head2d_kernel(
    x_ptr, w_ptr, out_ptr,
    out_channels, out_frames, out_height, out_width, tiles_w, tiles_hw,
    x_sb, x_sc, x_st, x_sh, x_sw,
    w_sn, w_sc, w_st, w_sh, w_sw,
    IN_CHANNELS: tl.constexpr, CHUNK: tl.constexpr, BH: tl.constexpr, BW: tl.constexpr,
    BN: tl.constexpr, CACHE: tl.constexpr, FRAME_FASTEST: tl.constexpr, DOT_IN_FP32: tl.constexpr,
    PREFETCH: tl.constexpr,
):
    if FRAME_FASTEST:
        lines = tl.num_programs(0) // tiles_hw
        bt = tl.program_id(0) % lines
        tile = tl.program_id(0) // lines
    else:
        tile = tl.program_id(0) % tiles_hw
        bt = tl.program_id(0) // tiles_hw
    b = bt // out_frames
    t = bt % out_frames
    r = tl.arange(0, BH * BW)
    h = (tile // tiles_w) * BH + r // BW
    w = (tile % tiles_w) * BW + r % BW
    m_ok = (h < out_height) & (w < out_width)
    h = tl.where(m_ok, h, 0)
    w = tl.where(m_ok, w, 0)
    x_base = b * x_sb + t * x_st + h * x_sh + w * x_sw
    n = tl.arange(0, BN)
    acc = tl.zeros((BH * BW, BN), dtype=tl.float32)
    steps: tl.constexpr = (IN_CHANNELS // CHUNK) * 27
    if PREFETCH:
        # Registers double-buffer x: step s + 1's load is issued before step s's dot.
        a = tl.load(x_ptr + x_base[:, None] + tl.arange(0, CHUNK)[None, :] * x_sc, mask=m_ok[:, None], other=0.0,
                    cache_modifier=CACHE)
    for step in range(steps):
        chunk = step // 27
        tap = step % 27
        dt = tap // 9
        dh = (tap // 3) % 3
        dw = tap % 3
        c = chunk * CHUNK + tl.arange(0, CHUNK)
        if PREFETCH:
            following = tl.minimum(step + 1, steps - 1)
            f_tap = following % 27
            f_c = (following // 27) * CHUNK + tl.arange(0, CHUNK)
            a_next = tl.load(x_ptr + (x_base + (f_tap // 9) * x_st + ((f_tap // 3) % 3) * x_sh
                                      + (f_tap % 3) * x_sw)[:, None] + f_c[None, :] * x_sc,
                             mask=m_ok[:, None], other=0.0, cache_modifier=CACHE)
        else:
            a = tl.load(x_ptr + (x_base + dt * x_st + dh * x_sh + dw * x_sw)[:, None] + c[None, :] * x_sc,
                        mask=m_ok[:, None], other=0.0, cache_modifier=CACHE)
        wt = tl.load(w_ptr + (c[:, None] * w_sc + dt * w_st + dh * w_sh + dw * w_sw) + n[None, :] * w_sn,
                     mask=(n < out_channels)[None, :], other=0.0)
        if DOT_IN_FP32:
            acc = tl.dot(a.to(tl.float32), wt.to(tl.float32), acc, input_precision="tf32")
        else:
            acc = tl.dot(a, wt, acc)
        if PREFETCH:
            a = a_next
    m = ((b * out_frames + t) * out_height + h) * out_width + w
    tl.store(out_ptr + m[:, None] * out_channels + n[None, :], acc.to(out_ptr.dtype.element_ty),
             mask=m_ok[:, None] & (n < out_channels)[None, :])


def head2d(x, weight, bh, bw, warps, stages, cache="", frame_fastest=False, prefetch=False):
    bsz, _, frames, height, width = x.shape
    weight = weight.contiguous(memory_format=torch.channels_last_3d)
    out_frames, out_height, out_width = frames - 2, height - 2, width - 2
    out = torch.empty(bsz, weight.shape[0], out_frames, out_height, out_width, device=x.device, dtype=x.dtype,
                      memory_format=torch.channels_last_3d)
    tiles_w = triton.cdiv(out_width, bw)
    tiles_hw = triton.cdiv(out_height, bh) * tiles_w
    grid = (tiles_hw * bsz * out_frames,)
    head2d_kernel[grid](
        x, weight, out, weight.shape[0], out_frames, out_height, out_width, tiles_w, tiles_hw,
        *x.stride(), *weight.stride(),
        IN_CHANNELS=x.shape[1], CHUNK=32, BH=bh, BW=bw, BN=16, CACHE=cache, FRAME_FASTEST=frame_fastest,
        DOT_IN_FP32=x.device.type == "cpu", PREFETCH=prefetch, num_warps=warps, num_stages=stages,
    )
    return out


VARIANTS = [
    # (BH, BW, warps, stages, cache, frame_fastest[, prefetch])
    (1, 256, 8, 3, "", False),
    (1, 256, 8, 2, "", False),
    (2, 128, 8, 2, "", False),
    (4, 64, 8, 2, "", False),
    (8, 32, 8, 2, "", False),
    (16, 16, 8, 2, "", False),
    (8, 32, 8, 3, "", False),
    (8, 32, 8, 4, "", False),
    (8, 32, 4, 2, "", False),
    (4, 32, 4, 2, "", False),
    (16, 32, 8, 2, "", False),
    (8, 64, 8, 2, "", False),
    (8, 32, 8, 2, "", True),
    (8, 32, 8, 1, "", False),
    (8, 32, 4, 1, "", False),
    (16, 32, 8, 1, "", False),
    (8, 32, 8, 1, "", False, True),
    (8, 32, 4, 1, "", False, True),
]


def ptx_counts() -> None:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    kernel = head2d_kernel
    for variant in VARIANTS:
        bh, bw, warps, stages, cache, ff = variant[:6]
        signature = {}
        constants = dict(IN_CHANNELS=256, CHUNK=32, BH=bh, BW=bw, BN=16, CACHE=cache, FRAME_FASTEST=ff,
                         DOT_IN_FP32=False, PREFETCH=len(variant) > 6 and variant[6])
        attrs = {}
        for index, name in enumerate(kernel.arg_names):
            if name in constants:
                signature[name] = "constexpr"
            elif name.endswith("_ptr"):
                signature[name] = "*bf16"
                attrs[(index,)] = [["tt.divisibility", 16]]
            elif name in ("x_sc", "w_sc"):
                signature[name] = "constexpr"
                constants[name] = 1
            else:
                signature[name] = "i32"
                if name in ("x_sw", "x_sh", "x_st", "x_sb", "w_sn", "w_sw", "w_sh", "w_st"):
                    attrs[(index,)] = [["tt.divisibility", 16]]
        compiled = triton.compile(ASTSource(kernel, signature, constants, attrs), target=GPUTarget("cuda", 90, 32),
                                  options={"num_warps": warps, "num_stages": stages})
        ptx = compiled.asm["ptx"]
        kinds = {k: ptx.count(k) for k in ("cp.async.ca", "cp.async.cg", "ld.global", "wgmma.mma_async",
                                            "mma.sync", "ldmatrix", "cp.async.bulk")}
        lds = sorted(set(t for l in ptx.splitlines() for t in l.split() if t.startswith("ld.global")))
        print(variant, kinds, lds, "shared", compiled.metadata.shared,
              "regs?", compiled.n_regs if hasattr(compiled, "n_regs") else "")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ptx", action="store_true")
    parser.add_argument("--cpu-check", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    if args.ptx:
        ptx_counts()
        return
    from torch_wanops.ops import conv3d_chunked
    from torch_wanops.bench import median_ms
    import torch.nn.functional as F

    if args.cpu_check:
        gen = torch.Generator().manual_seed(0)
        x = torch.randn(2, 64, 5, 11, 13, generator=gen).to(torch.bfloat16).contiguous(
            memory_format=torch.channels_last_3d)
        w = (torch.randn(12, 64, 3, 3, 3, generator=gen) * 0.05).to(torch.bfloat16)
        ref = conv3d_chunked(x, w)
        for variant in VARIANTS:
            bh, bw = variant[:2]
            got = head2d(x, w, min(bh, 4), min(bw, 8), *variant[2:])
            print((bh, bw), torch.equal(got, ref), got.stride() == ref.stride())
        return
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(1, 256, 6, 242, 418, generator=gen).to("cuda", torch.bfloat16).contiguous(
        memory_format=torch.channels_last_3d)
    w = (torch.randn(12, 256, 3, 3, 3, generator=gen) * 0.05).to("cuda", torch.bfloat16)
    ref = conv3d_chunked(x, w)
    stock = F.conv3d(x.contiguous(), w)
    print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), "op == stock",
          torch.equal(ref, stock))
    cudnn_ms = median_ms(lambda: F.conv3d(x, w), "cuda")
    op_ms = median_ms(lambda: conv3d_chunked(x, w), "cuda")
    print(f"cuDNN {cudnn_ms:.4f} ms, conv3d_chunked {op_ms:.4f} ms")
    for variant in VARIANTS:
        try:
            got = head2d(x, w, *variant)
            same = torch.equal(got, ref)
            ms = [median_ms(lambda: head2d(x, w, *variant), "cuda") for _ in range(args.repeats)]
            print(variant, f"{min(ms):.4f} ms", "same bits" if same else "DIFFERENT", flush=True)
        except Exception as exc:  # a tile that does not compile is a row, not the end of the sweep
            print(variant, "failed:", type(exc).__name__, str(exc)[:200], flush=True)


if __name__ == "__main__":
    main()
