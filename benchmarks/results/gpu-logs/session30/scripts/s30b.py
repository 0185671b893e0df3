"""Session 30 B: which step of Wan2.2's attention (1024ch, 30x52) changes bits when its 21 frames run as one batch,
and which per-frame channel norms of a 21-frame tensor give the one-frame tensor's bits."""

import torch
import torch.nn.functional as F
import triton.testing

torch.manual_seed(0)
dev = "cuda" if torch.cuda.is_available() else "cpu"
dt, T, C, H, W = torch.bfloat16, 21, 1024, 30, 52


def per_frame_equal(batched, alone):
    return f"{sum(torch.equal(batched[t:t + 1], alone[t]) for t in range(T))}/{T}"


def norm(x):
    return torch.linalg.vector_norm(x.float(), dim=1, keepdim=True)


print(torch.__version__, dev, "cuDNN", torch.backends.cudnn.version())
# The attention's frames: (T, C, H, W) contiguous, as stock's permute + reshape leaves them.
frames = torch.randn(T, C, H, W, device=dev, dtype=dt)
alone = [frames[t:t + 1].contiguous() for t in range(T)]
print("norm of (T, C, H, W) frames:", per_frame_equal(norm(frames), [norm(a) for a in alone]))
print("norm of (T, C, 1, H, W) frames:", per_frame_equal(norm(frames.unsqueeze(2)), [norm(a.unsqueeze(2)) for a in alone]))
video = frames.permute(1, 0, 2, 3).unsqueeze(0).contiguous()  # (1, C, T, H, W)
alone5 = [video[:, :, t:t + 1].contiguous() for t in range(T)]
print("norm of a contiguous video, frame slices:",
      f"{sum(torch.equal(norm(video[:, :, t:t + 1]), norm(alone5[t])) for t in range(T))}/{T}")
frame_major = frames.unsqueeze(0).permute(0, 2, 1, 3, 4)  # (1, C, T, H, W) view of (1, T, C, H, W) memory
print("norm of a frame-major video, frame slices:",
      f"{sum(torch.equal(norm(frame_major[:, :, t:t + 1]), norm(alone5[t])) for t in range(T))}/{T}")

w_qkv = torch.randn(3 * C, C, 1, 1, device=dev, dtype=dt) / C ** 0.5
b_qkv = torch.randn(3 * C, device=dev, dtype=dt)
qkv = F.conv2d(frames, w_qkv, b_qkv)
print("to_qkv 1x1 conv:", per_frame_equal(qkv, [F.conv2d(a, w_qkv, b_qkv) for a in alone]))
w_proj = torch.randn(C, C, 1, 1, device=dev, dtype=dt) / C ** 0.5
b_proj = torch.randn(C, device=dev, dtype=dt)
print("proj 1x1 conv:", per_frame_equal(F.conv2d(frames, w_proj, b_proj), [F.conv2d(a, w_proj, b_proj) for a in alone]))
qkv = qkv.reshape(T, 1, 3 * C, H * W).permute(0, 1, 3, 2).contiguous()
q, k, v = qkv.chunk(3, dim=-1)
attended = F.scaled_dot_product_attention(q, k, v)
print("SDPA:", per_frame_equal(attended, [F.scaled_dot_product_attention(q[t:t + 1], k[t:t + 1], v[t:t + 1])
                                          for t in range(T)]))
ms = triton.testing.do_bench_cudagraph
print(f"per-frame norms {ms(lambda: [norm(a) for a in alone]):.3f} ms, one batched norm {ms(lambda: norm(frames)):.3f} ms")
