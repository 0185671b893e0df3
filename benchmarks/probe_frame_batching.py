"""Whether a decode's latent-resolution stage gives the same bits run over several latent frames at once.

    python benchmarks/probe_frame_batching.py --model wan2.2 --dtype bf16 --size 480x832 --frames 81

Stock decodes one latent frame per chunk. conv_in, the mid block and the first up block's residual blocks
work at latent resolution, where each 3x3x3 conv sees 3 frames and writes 1 (Wan2.2 480x832: 1560 positions,
a narrow cuDNN tile) and the attention runs on one frame. Their causal caches hold only their own inputs, so
the stage could run over G frames at once: stock's modules without a cache pad 2 zero frames in front, as
the first chunk does. That is lossless only where every op gives a frame the same bits in a G-frame call as
in a one-frame call. For G in --groups this runs the stage's stock modules both ways on the same weights and
latents and counts the frames whose outputs are equal, then the same per op (conv_in, the 3x3x3 conv in both
layouts, the fp32 channel norm on the residual blocks' (1, C, T, H, W) and on the attention's (T, C, H, W), the
attention's 1x1 convs and SDPA), and times both ways (CUDA: CUDA-graph replays, GPU time only).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import add_decode_case_arguments, decode_case, median_ms  # noqa: E402
from torch_wanops.decoder import _stock_cached_conv  # noqa: E402  (WanDecoder3d.forward's conv_in cache step)


def stage_modules(decoder: nn.Module) -> list[nn.Module]:
    """The latent-resolution stage after conv_in: the mid block, then the first up block's residual blocks."""
    return [decoder.mid_block, *decoder.up_blocks[0].resnets]


def run_stage(decoder: nn.Module, x: torch.Tensor, feat_cache: list | None) -> torch.Tensor:
    """conv_in and the stage on the chunk x, with stock's cache protocol when ``feat_cache`` is a list."""
    feat_idx = [0]
    out = decoder.conv_in(x) if feat_cache is None else _stock_cached_conv(decoder.conv_in, x, feat_cache, feat_idx)
    for module in stage_modules(decoder):
        out = module(out, feat_cache=feat_cache, feat_idx=feat_idx)
    return out


def stage_in_groups(decoder: nn.Module, x: torch.Tensor, group: int) -> torch.Tensor:
    """The stage over x's frames in chunks of ``group`` frames (1: stock's chunks), caches carried across chunks."""
    feat_cache: list = [None] * 64
    return torch.cat([run_stage(decoder, x[:, :, t:t + group], feat_cache) for t in range(0, x.shape[2], group)], 2)


def stage_steps(decoder: nn.Module) -> list[tuple[str, nn.Module]]:
    """conv_in and the stage's modules in the order they run, the mid block taken apart."""
    mid = decoder.mid_block
    steps = [("conv_in", decoder.conv_in), ("mid_block.resnets.0", mid.resnets[0])]
    for index, (attention, resnet) in enumerate(zip(mid.attentions, mid.resnets[1:])):
        if attention is not None:
            steps.append((f"mid_block.attentions.{index}", attention))
        steps.append((f"mid_block.resnets.{index + 1}", resnet))
    up_resnets = decoder.up_blocks[0].resnets
    return steps + [(f"up_blocks.0.resnets.{index}", resnet) for index, resnet in enumerate(up_resnets)]


def step_outputs_in_groups(decoder: nn.Module, x: torch.Tensor, group: int) -> dict[str, torch.Tensor]:
    """Each stage step's output over x's frames, the stage run in chunks of ``group`` frames."""
    chunks: dict[str, list[torch.Tensor]] = {name: [] for name, _ in stage_steps(decoder)}
    handles = [module.register_forward_hook(lambda module, args, out, name=name: chunks[name].append(out))
               for name, module in stage_steps(decoder)]
    try:
        stage_in_groups(decoder, x, group)
    finally:
        for handle in handles:
            handle.remove()
    return {name: torch.cat(outputs, 2) for name, outputs in chunks.items()}


def equal_frames(a: torch.Tensor, b: torch.Tensor) -> int:
    """How many frames (dim 2) of a and b hold the same bits."""
    return sum(torch.equal(a[:, :, t], b[:, :, t]) for t in range(a.shape[2]))


def timer(device: torch.device) -> Callable[[Callable[[], object]], float]:
    """ms per call: on CUDA the GPU time of CUDA-graph replays, which a decode's queued launches approach."""
    if device.type != "cuda":
        return lambda fn: median_ms(fn, device.type)
    import triton.testing

    def gpu_ms(fn: Callable[[], object]) -> float:
        try:
            return triton.testing.do_bench_cudagraph(fn, rep=200)
        except RuntimeError:  # not capturable: timed with its CPU launches
            return median_ms(fn, device.type)

    return gpu_ms


def op_rows(decoder: nn.Module, x: torch.Tensor) -> list[tuple[str, Callable[[torch.Tensor], torch.Tensor], torch.Tensor]]:
    """(label, op, input) per op of the stage, the input's frames along dim 2 (frame t of the output is frame t's)."""
    conv = decoder.mid_block.resnets[0].conv1
    channels, frames, height, width = conv.in_channels, x.shape[2], x.shape[3], x.shape[4]
    generator = torch.Generator().manual_seed(1)

    def rand(*shape: int) -> torch.Tensor:
        return torch.randn(shape, generator=generator).to(x.device, x.dtype)

    padded = rand(1, channels, frames + 2, height + 2, width + 2)
    conv_in = decoder.conv_in
    weight, bias = conv.weight.detach(), conv.bias.detach()
    weight_cl = weight.contiguous(memory_format=torch.channels_last_3d)
    attention = next(a for a in decoder.mid_block.attentions if a is not None)
    to_qkv, proj = attention.to_qkv, attention.proj
    tokens = height * width

    def frame_batch(op: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor], torch.Tensor]:
        # The attention works on (frames, C, H, W); the rows hand it (1, C, frames, H, W).
        return lambda v: op(v[0].transpose(0, 1).contiguous()).transpose(0, 1).unsqueeze(0)

    def channel_norm(v: torch.Tensor) -> torch.Tensor:
        return torch.linalg.vector_norm(v.float(), dim=1, keepdim=True)

    def sdpa(qkv: torch.Tensor) -> torch.Tensor:
        q, k, v = qkv.reshape(qkv.shape[0], 1, 3 * channels, tokens).permute(0, 1, 3, 2).contiguous().chunk(3, dim=-1)
        return F.scaled_dot_product_attention(q, k, v).reshape(qkv.shape[0], -1, 1, 1)

    return [
        ("conv_in 3x3x3 conv, NCDHW + bias", lambda v: F.conv3d(v, conv_in.weight.detach(), conv_in.bias.detach()),
         rand(1, conv_in.in_channels, frames + 2, height + 2, width + 2)),
        ("3x3x3 conv, NCDHW + bias", lambda v: F.conv3d(v, weight, bias), padded),
        ("3x3x3 conv, channels-last, no bias", lambda v: F.conv3d(v, weight_cl),
         padded.contiguous(memory_format=torch.channels_last_3d)),
        ("fp32 channel norm", channel_norm, rand(1, channels, frames, height, width)),
        ("attention's fp32 channel norm (frames as batch)", frame_batch(channel_norm),
         rand(1, channels, frames, height, width)),
        ("attention to_qkv (1x1)", frame_batch(to_qkv), rand(1, channels, frames, height, width)),
        ("attention proj (1x1)", frame_batch(proj), rand(1, channels, frames, height, width)),
        ("attention SDPA", frame_batch(sdpa), rand(1, 3 * channels, frames, height, width)),
    ]


def probe_op(op: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, group: int, temporal: bool
             ) -> tuple[torch.Tensor, Callable[[], object]]:
    """op over x's frames in chunks of ``group`` output frames (a temporal op's chunks overlap by its 2 extra frames)."""
    extra = 2 if temporal else 0
    starts = range(0, x.shape[2] - extra, group)
    chunks = [x[:, :, t:t + group + extra].contiguous(memory_format=_layout(x)) for t in starts]
    return torch.cat([op(c) for c in chunks], 2), lambda: [op(c) for c in chunks]


def _layout(x: torch.Tensor) -> torch.memory_format:
    return torch.channels_last_3d if x.is_contiguous(memory_format=torch.channels_last_3d) and not x.is_contiguous() \
        else torch.contiguous_format


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--groups", type=int, nargs="+", default=[3, 5, 21], help="frames per batched call")
    args = parser.parse_args()
    vae, z = decode_case(args, args.device)
    decoder = vae.decoder
    ms = timer(z.device)
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name() if z.is_cuda else 'cpu'}; {args.model} "
          f"{args.dtype} {args.size}, {z.shape[2]} latent frames", flush=True)
    with torch.no_grad():
        x = vae.post_quant_conv(z)
        reference = step_outputs_in_groups(decoder, x, 1)
        chunked_ms = ms(lambda: stage_in_groups(decoder, x, 1))
        print(f"stage, stock's chunks of 1 frame: {chunked_ms:.3f} ms", flush=True)
        for group in args.groups:
            steps = step_outputs_in_groups(decoder, x, group)
            group_ms = ms(lambda: stage_in_groups(decoder, x, group))
            last = next(reversed(steps))
            print(f"stage, chunks of {group}: {equal_frames(steps[last], reference[last])}/{x.shape[2]} frames equal, "
                  f"{group_ms:.3f} ms ({chunked_ms / group_ms:.2f}x); frames equal after each step: "
                  + ", ".join(f"{name} {equal_frames(out, reference[name])}" for name, out in steps.items()),
                  flush=True)
        for label, op, op_input in op_rows(decoder, x):
            temporal = "conv," in label
            alone, alone_fn = probe_op(op, op_input, 1, temporal)
            alone_ms = ms(alone_fn)
            for group in args.groups:
                together, together_fn = probe_op(op, op_input, group, temporal)
                group_ms = ms(together_fn)
                print(f"{label}, chunks of {group}: {equal_frames(together, alone)}/{alone.shape[2]} frames equal, "
                      f"{group_ms:.3f} ms against {alone_ms:.3f} ms ({alone_ms / group_ms:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
