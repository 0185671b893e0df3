"""Session 30 A: is the latent-resolution stage batch-invariant over frames?

The decoder runs every chunk (one latent frame) through conv_in, the mid block and the first up block's residual
blocks at latent resolution, where each Conv3d sees 3 frames and outputs 1 (1560 positions on Wan2.2: cuDNN's
64x128 tile at ~520 TFLOP/s) and the attention runs one frame. Those layers' causal caches only hold their own
inputs, so the whole stage could run once over all frames (the conv over the 2 zero frames + 21 frames). That is
exact only if each op gives the same bits per frame batched as alone. This probe answers that per op, bf16, and
times both ways (CUDA-graph replays: GPU time).
"""

import torch
import torch.nn.functional as F
import triton.testing
from diffusers.models.autoencoders.autoencoder_kl_wan import WanAttentionBlock

torch.manual_seed(0)
import os
dev = "cuda" if torch.cuda.is_available() else "cpu"
FRAMES = int(os.environ.get("FRAMES", 21))
dt = torch.bfloat16


def kernels(fn):
    if dev == "cpu":
        return []
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name[:90] for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def gpu_ms(fn):
    if dev == "cpu":
        return 1.0
    return triton.testing.do_bench_cudagraph(fn, rep=200)


def report(label, chunked_fn, batched_fn, per_frame_equal):
    chunk_ms, batch_ms = gpu_ms(chunked_fn), gpu_ms(batched_fn)
    print(f"{label}: per-frame equal {per_frame_equal[0]}/{per_frame_equal[1]} frames; "
          f"{FRAMES} chunks {chunk_ms:.3f} ms, batched {batch_ms:.3f} ms ({chunk_ms / batch_ms:.2f}x)")
    print("   chunk kernels:", kernels(chunked_fn))
    print("   batch kernels:", kernels(batched_fn))


def conv_case(label, cin, cout, h, w, channels_last, bias):
    weight = torch.randn(cout, cin, 3, 3, 3, device=dev, dtype=dt) / (cin * 27) ** 0.5
    b = torch.randn(cout, device=dev, dtype=dt) if bias else None
    fmt = torch.channels_last_3d if channels_last else torch.contiguous_format
    seq = torch.randn(1, cin, FRAMES + 2, h + 2, w + 2, device=dev, dtype=dt).contiguous(memory_format=fmt)
    seq[:, :, :2] = 0  # the causal zero frames of the first chunk
    chunks = [seq[:, :, t:t + 3].contiguous(memory_format=fmt) for t in range(FRAMES)]
    if channels_last:
        weight = weight.contiguous(memory_format=torch.channels_last_3d)
    alone = [F.conv3d(c, weight, b) for c in chunks]
    together = F.conv3d(seq, weight, b)
    equal = sum(torch.equal(together[:, :, t], alone[t][:, :, 0]) for t in range(FRAMES))
    report(f"conv {label} {cin}->{cout} {h}x{w} {'NDHWC' if channels_last else 'NCDHW'}{' +bias' if bias else ''}",
           lambda: [F.conv3d(c, weight, b) for c in chunks], lambda: F.conv3d(seq, weight, b), (equal, FRAMES))


def norm_case(label, c, h, w):
    x = torch.randn(1, c, FRAMES, h, w, device=dev, dtype=dt)
    frames = [x[:, :, t:t + 1].contiguous() for t in range(FRAMES)]
    alone = [torch.linalg.vector_norm(f.float(), dim=1, keepdim=True) for f in frames]
    together = torch.linalg.vector_norm(x.float(), dim=1, keepdim=True)
    equal = sum(torch.equal(together[:, :, t:t + 1], alone[t]) for t in range(FRAMES))
    alone16 = [torch.linalg.vector_norm(f, dim=1, keepdim=True, dtype=torch.float32) for f in frames]
    together16 = torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32)
    equal16 = sum(torch.equal(together16[:, :, t:t + 1], alone16[t]) for t in range(FRAMES))
    print(f"norm {label} {c}ch {h}x{w}: x.float() per-frame equal {equal}/{FRAMES}, "
          f"upcast-in-reduction {equal16}/{FRAMES}, batched-vs-alone same as chunked fp32 norm: "
          f"{sum(torch.equal(alone[t], alone16[t]) for t in range(FRAMES))}/{FRAMES}")


def attention_case(label, c, h, w):
    block = WanAttentionBlock(c).to(dev, dt).eval()
    with torch.no_grad():
        for name, p in block.named_parameters():
            p.copy_(1 + 0.1 * torch.randn_like(p) if "gamma" in name else torch.randn_like(p) / c ** 0.5)
    x = torch.randn(1, c, FRAMES, h, w, device=dev, dtype=dt)
    frames = [x[:, :, t:t + 1].contiguous() for t in range(FRAMES)]
    with torch.no_grad():
        alone = [block(f) for f in frames]
        together = block(x)
        equal = sum(torch.equal(together[:, :, t:t + 1], alone[t]) for t in range(FRAMES))

        def chunked():
            return [block(f) for f in frames]

        def batched():
            return block(x)

        report(f"attention {label} {c}ch {h}x{w}", chunked, batched, (equal, FRAMES))


print(torch.__version__, torch.cuda.get_device_name() if dev == "cuda" else "cpu", "cuDNN", torch.backends.cudnn.version())
SCALE = 1 if dev == "cuda" else 8

def sized(c, h, w):
    return (c // SCALE, max(4, h // SCALE), max(4, w // SCALE))


for cl in (True, False):
    conv_case("wan2.2 mid", 1024 // SCALE, *sized(1024, 30, 52), cl, not cl)
    conv_case("wan2.2 conv_in", 48, *sized(1024, 30, 52), cl, not cl)
    conv_case("wan2.1 mid", 384 // SCALE, *sized(384, 60, 104), cl, not cl)
    conv_case("wan2.1 conv_in", 16, *sized(384, 60, 104), cl, not cl)
norm_case("wan2.2", *sized(1024, 30, 52))
norm_case("wan2.1", *sized(384, 60, 104))
attention_case("wan2.2", *sized(1024, 30, 52))
attention_case("wan2.1", *sized(384, 60, 104))
