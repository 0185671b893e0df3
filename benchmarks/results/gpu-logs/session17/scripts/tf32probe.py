"""Session 17 probe: does a Triton implicit GEMM in chunk order with TF32 dots give cuDNN's fp32 (TF32) conv bits?

Variants: operand rounding before the dot (none = the hardware reads fp32 bits, rna = cvt.rna.tf32,
rne = integer round to nearest even), chunk-major vs tap-major, K chunk 32/16/8; then tiles for speed.
"""
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from torch_wanops.decoder import _conv_kernels

CL = torch.channels_last_3d


@triton.jit
def to_tf32(v, ROUND: tl.constexpr):
    if ROUND == 1:
        v = tl.inline_asm_elementwise("cvt.rna.tf32.f32 $0, $1;", "=r,r", [v], dtype=tl.float32, is_pure=True, pack=1)
    elif ROUND == 3:
        v = tl.inline_asm_elementwise("cvt.rn.tf32.f32 $0, $1;", "=r,r", [v], dtype=tl.float32, is_pure=True, pack=1)
    elif ROUND == 2:
        bits = v.to(tl.uint32, bitcast=True)
        bits = (bits + 0xFFF + ((bits >> 13) & 1)) & 0xFFFFE000
        v = bits.to(tl.float32, bitcast=True)
    return v


@triton.jit
def probe_kernel(x_ptr, w_ptr, out_ptr, positions, out_channels, out_frames, out_height, out_width,
                 x_sb, x_sc, x_st, x_sh, x_sw, w_sn, w_sc, w_st, w_sh, w_sw,
                 IN_CHANNELS: tl.constexpr, CHUNK: tl.constexpr, ROUND: tl.constexpr, ROUND_B: tl.constexpr, TAP_MAJOR: tl.constexpr,
                 BLOCK_M: tl.constexpr, BLOCK_N1: tl.constexpr, BLOCK_N2: tl.constexpr):
    m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    n0 = tl.program_id(1) * (BLOCK_N1 + BLOCK_N2)
    m_ok = m < positions
    m = tl.where(m_ok, m, 0)
    w = m % out_width
    rest = m // out_width
    h = rest % out_height
    rest = rest // out_height
    t = rest % out_frames
    b = rest // out_frames
    x_base = b * x_sb + t * x_st + h * x_sh + w * x_sw
    k = tl.arange(0, CHUNK)
    n1 = n0 + tl.arange(0, BLOCK_N1)
    acc1 = tl.zeros((BLOCK_M, BLOCK_N1), dtype=tl.float32)
    if BLOCK_N2 > 0:
        n2 = n0 + BLOCK_N1 + tl.arange(0, BLOCK_N2)
        acc2 = tl.zeros((BLOCK_M, BLOCK_N2), dtype=tl.float32)
    for step in range((IN_CHANNELS // CHUNK) * 27):
        if TAP_MAJOR:
            tap = step // (IN_CHANNELS // CHUNK)
            chunk = step % (IN_CHANNELS // CHUNK)
        else:
            chunk = step // 27
            tap = step % 27
        dt = tap // 9
        dh = (tap // 3) % 3
        dw = tap % 3
        c = chunk * CHUNK + k
        a = tl.load(x_ptr + (x_base + dt * x_st + dh * x_sh + dw * x_sw)[:, None] + c[None, :] * x_sc,
                    mask=m_ok[:, None], other=0.0)
        a = to_tf32(a, ROUND)
        w_tap = c[:, None] * w_sc + dt * w_st + dh * w_sh + dw * w_sw
        b1 = tl.load(w_ptr + w_tap + n1[None, :] * w_sn, mask=(n1 < out_channels)[None, :], other=0.0)
        b1 = to_tf32(b1, ROUND * ROUND_B)
        acc1 = tl.dot(a, b1, acc1, input_precision="tf32")
        if BLOCK_N2 > 0:
            b2 = tl.load(w_ptr + w_tap + n2[None, :] * w_sn, mask=(n2 < out_channels)[None, :], other=0.0)
            b2 = to_tf32(b2, ROUND * ROUND_B)
            acc2 = tl.dot(a, b2, acc2, input_precision="tf32")
    out_row = out_ptr + m[:, None] * out_channels
    tl.store(out_row + n1[None, :], acc1, mask=m_ok[:, None] & (n1 < out_channels)[None, :])
    if BLOCK_N2 > 0:
        tl.store(out_row + n2[None, :], acc2, mask=m_ok[:, None] & (n2 < out_channels)[None, :])


def run(x, w, chunk, rnd, tap_major, bm, bn1, bn2, warps, stages, round_b=1):
    out = torch.empty((x.shape[0], w.shape[0], *(x.shape[d] - 2 for d in (2, 3, 4))), device=x.device,
                      dtype=torch.float32, memory_format=CL)
    positions = out.numel() // out.shape[1]
    grid = (triton.cdiv(positions, bm), triton.cdiv(w.shape[0], bn1 + bn2))

    def launch():
        return probe_kernel[grid](x, w, out, positions, *out.shape[1:], *x.stride(), *w.stride(),
                                  IN_CHANNELS=x.shape[1], CHUNK=chunk, ROUND=rnd, ROUND_B=round_b, TAP_MAJOR=tap_major,
                                  BLOCK_M=bm, BLOCK_N1=bn1, BLOCK_N2=bn2, num_warps=warps, num_stages=stages)
    kern = launch()
    return out, launch, kern


def spread(shape, s, seed):
    g = torch.Generator().manual_seed(seed)
    v = torch.randn(shape, generator=g) * torch.exp2(torch.randint(-s, s + 1, shape, generator=g).float())
    return v.cuda()


def rne(t):
    b = t.contiguous(memory_format=CL).view(torch.int32)
    return ((b + 0xFFF + ((b >> 13) & 1)) & ~0x1FFF).view(torch.float32)


# (label, round, round_b, pre-round x, pre-round w, tap_major)
VARIANTS = [("rne A+B in loop", 2, 1, False, False, False), ("rne A in loop, w pre", 2, 0, False, True, False),
            ("cvt.rn A in loop, w pre", 3, 0, False, True, False), ("x, w pre-rounded", 0, 0, True, True, False),
            ("rne tap-major", 2, 1, False, False, True)]


def tiles_for(cout):
    if cout <= 64:
        return 128, max(16, triton.next_power_of_2(cout)), 0
    if cout > 128:
        return 128, 128, 0
    return 128, 64, max(16, triton.next_power_of_2(min(cout, 128) - 64))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "order"
    print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(),
          "allow_tf32", torch.backends.cudnn.allow_tf32, flush=True)
    geoms = [((1, 96, 6, 482, 834), 96, (0, 8)), ((1, 96, 3, 482, 834), 96, (8,)), ((1, 96, 6, 242, 418), 96, (0,)),
             ((1, 96, 6, 482, 834), 3, (0,)), ((2, 96, 4, 34, 66), 96, (0, 8)), ((1, 192, 6, 242, 418), 192, (0,)),
             ((1, 384, 4, 122, 210), 384, (0,)), ((1, 192, 6, 242, 418), 96, (0,))]
    if mode == "order":
        for shape, cout, spreads in geoms:
            for s in spreads:
                x = spread(shape, s, 0).contiguous(memory_format=CL)
                w = spread((cout, shape[1], 3, 3, 3), s, 1) * 0.05
                wcl = w.contiguous(memory_format=CL)
                with torch.no_grad():
                    ref, kernels = _conv_kernels(lambda a: F.conv3d(a, w), x)
                    cudnn_ms = triton.testing.do_bench(lambda: F.conv3d(x, w), rep=40)
                print(f"{shape}->{cout} spread {s}: cuDNN {cudnn_ms:.3f} ms {sorted(kernels)}", flush=True)
                bm, bn1, bn2 = tiles_for(cout)
                for label, rnd, round_b, pre_x, pre_w, tap_major in VARIANTS:
                    xin = rne(x) if pre_x else x
                    win = rne(wcl) if pre_w else wcl
                    out, launch, kern = run(xin, win, 32, rnd, tap_major, bm, bn1, bn2, 8, 3, round_b)
                    ms = triton.testing.do_bench(launch, rep=40)
                    print(f"   {label:26s}: equal={torch.equal(out, ref)} mismatch={(out != ref).float().mean().item():.2e} "
                          f"{ms:.3f} ms ({cudnn_ms / ms:.2f}x)", flush=True)
                del x, w, wcl, ref
    else:
        shape, cout = ((1, 96, 6, 482, 834), 96) if mode == "t96" else ((1, 192, 6, 242, 418), 192)
        x = spread(shape, 0, 0).contiguous(memory_format=CL)
        w = spread((cout, shape[1], 3, 3, 3), 0, 1) * 0.05
        wcl = w.contiguous(memory_format=CL)
        with torch.no_grad():
            ref, _ = _conv_kernels(lambda a: F.conv3d(a, w), x)
            cudnn_ms = triton.testing.do_bench(lambda: F.conv3d(x, w))
        print(f"{shape}->{cout} cuDNN {cudnn_ms:.3f} ms", flush=True)
        tiles = ([(128, 64, 32, 8, 3), (128, 64, 32, 4, 4), (256, 64, 32, 8, 3), (128, 64, 32, 8, 4), (64, 64, 32, 4, 4)]
                 if cout == 96 else [(128, 128, 0, 8, 3), (128, 64, 64, 8, 3), (256, 128, 0, 8, 3), (128, 128, 0, 4, 4),
                                     (256, 64, 64, 8, 3), (128, 192, 0, 8, 3)])
        for label, rnd, round_b, pre_x, pre_w, tap_major in VARIANTS[1:4]:
            xin = rne(x) if pre_x else x
            win = rne(wcl) if pre_w else wcl
            for bm, bn1, bn2, warps, stages in tiles:
                try:
                    out, launch, kern = run(xin, win, 32, rnd, False, bm, bn1, bn2, warps, stages, round_b)
                    ms = triton.testing.do_bench(launch)
                    print(f"   {label:26s} BM{bm} BN{bn1}+{bn2} w{warps} s{stages}: equal={torch.equal(out, ref)} {ms:.3f} ms "
                          f"({cudnn_ms / ms:.2f}x)", flush=True)
                except Exception as e:  # noqa: BLE001
                    print(f"   {label} BM{bm} BN{bn1}+{bn2} w{warps} s{stages}: failed {type(e).__name__}: {str(e)[:150]}", flush=True)


if __name__ == "__main__":
    main()
