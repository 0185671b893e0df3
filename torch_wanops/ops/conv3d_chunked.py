"""``wanops::conv3d_chunked``: a stride-1, unpadded, bias-free Conv3d summed in cuDNN's channel-chunk order.

Spec (the reference below): ``F.conv3d(x, weight)`` returned channels_last_3d. The
Triton kernel (input channels a multiple of 32; bf16, fp16, and fp32 where cuDNN is enabled
and may use TF32: ``torch.backends.cudnn.allow_tf32`` or ``torch.backends.cudnn.conv.fp32_precision``,
TF32 by default) adds the products in 32-channel chunks, the kernel taps inside each
chunk, on the tensor cores into fp32, and rounds once: the order of cuDNN's implicit-GEMM kernels with a 32-channel K tile, so where
cuDNN runs such a kernel for a geometry the two give the same bits (the decoder checks
that per geometry before it uses this op; ``decoder.CHUNKED_CONVS``). fp32 is TF32
arithmetic as cuDNN's is: both operands rounded to the nearest TF32 value, ties to even,
then multiplied exactly (on any device, the interpreter's included; CPU convolutions
themselves never use TF32). It is faster than cuDNN's choice where that choice is a
narrow-tile kernel: Wan2.1's 96-channel convs on an H200.

With ``truncate_x`` fp32 x is read as the tensor cores read fp32 bits, its low 13 significand
bits dropped (``_common.truncated_to_tf32``), instead of rounded to nearest: the same for an x
already on the TF32 grid (``rms_norm_cat_pad_5d``'s ``tf32_out``), which the kernel then
hands to the tensor cores as loaded, without rounding it in registers (faster). Other dtypes
are on the TF32 grid already and read as they are either way.

With ``tail_tiles`` the kernel sums the output's last ``tail_tiles`` tiles of 128 positions x 128
output channels (position blocks in order, channel blocks fastest) as cuDNN's ``segment_k_on``
TF32 kernels sum some of their last tiles (on an H200 the tiles left after whole waves over the
SMs, or fewer; the decoder's check finds how many per geometry): their K steps (32
channels x one tap each, chunk-major) cut into ``tail_segments`` runs (run s: steps
``s * K // S`` to ``(s + 1) * K // S``), each summed from zero, then added from the last run back
to the first (H200, session 19, ``benchmarks/probe_split_tiles.py``). Like the chunk order itself
it is an order of the same sum: the reference path, ``F.conv3d``, has its own.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torch_wanops import _backend
from torch_wanops.ops._common import (
    define_op,
    require,
    require_same_placement,
    require_int,
    require_tensor,
    rounded_to_tf32,
    truncated_to_tf32,
)

_kernels = _backend.kernel_module("conv3d_chunked")

# The channels summed per step: the K tile of the cuDNN kernels whose order the kernel follows.
CHUNK = 32
# The tail tiles' side (positions and output channels): cuDNN's 128x128x32 TF32 tile.
TAIL_TILE = 128
# The dtypes its kernel takes; fp32 only as TF32 (takes_kernel), the arithmetic cuDNN's fp32 convs use then.
KERNEL_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def check_conv3d_chunked_types(
    x: object, weight: object, truncate_x: object, tail_tiles: object = 0, tail_segments: object = 1
) -> None:
    """The Python-type half of the checks, run before the dispatcher sees the call."""
    require_tensor(x, "x")
    require_tensor(weight, "weight")
    if not isinstance(truncate_x, bool):
        raise TypeError(f"truncate_x must be a bool, got {type(truncate_x).__name__}")
    require_int(tail_tiles, "tail_tiles")
    require_int(tail_segments, "tail_segments")


def check_conv3d_chunked_args(
    x: object, weight: object, truncate_x: object = False, tail_tiles: object = 0, tail_segments: object = 1
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_conv3d_chunked_types(x, weight, truncate_x, tail_tiles, tail_segments)
    require_same_placement(x, "x", weight, "weight")
    require(
        weight.shape[1] == x.shape[1],
        ValueError,
        lambda: f"weight must take x's {x.shape[1]} channels (weight.shape[1]), got weight {tuple(weight.shape)}",
    )
    for dim, label in ((2, "frames"), (3, "height"), (4, "width")):
        require(
            weight.shape[dim] <= x.shape[dim],
            ValueError,
            lambda: f"weight's kernel {tuple(weight.shape[2:])} must fit in x's {label} (x {tuple(x.shape)})",
        )
    tiles = output_tiles(x, weight)
    require(
        0 <= tail_tiles <= tiles,
        ValueError,
        lambda: f"tail_tiles must be in [0, {tiles}] (the output's {TAIL_TILE}x{TAIL_TILE} tiles), got {tail_tiles}",
    )
    steps = k_steps(x, weight)
    require(
        1 <= tail_segments <= max(1, steps),
        ValueError,
        lambda: f"tail_segments must be in [1, {max(1, steps)}] (the conv's K steps), got {tail_segments}",
    )


def output_shape(x: torch.Tensor, weight: torch.Tensor) -> tuple:
    return (x.shape[0], weight.shape[0], *(x.shape[d] - weight.shape[d] + 1 for d in (2, 3, 4)))


def output_tiles(x: torch.Tensor, weight: torch.Tensor) -> int:
    """The output's tiles of TAIL_TILE positions x TAIL_TILE channels."""
    shape = output_shape(x, weight)
    positions = shape[0] * shape[2] * shape[3] * shape[4]
    return -(-positions // TAIL_TILE) * -(-shape[1] // TAIL_TILE)


def k_steps(x: torch.Tensor, weight: torch.Tensor) -> int:
    """The kernel's reduction steps: one per 32-channel chunk and kernel tap."""
    return x.shape[1] // CHUNK * weight.shape[2] * weight.shape[3] * weight.shape[4]


def _empty_output(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The output, channels_last_3d with the canonical strides (size-1 dimensions included), as the fake allocates it."""
    return torch.empty(output_shape(x, weight), dtype=x.dtype, device=x.device, memory_format=torch.channels_last_3d)


def conv3d_chunked_reference(x: torch.Tensor, weight: torch.Tensor, truncate_x: bool = False) -> torch.Tensor:
    """F.conv3d, in its own order (the chunk order and the tail split are orders of the same sum), channels_last_3d."""
    if truncate_x and x.dtype == torch.float32:
        x = truncated_to_tf32(x)
    return _empty_output(x, weight).copy_(F.conv3d(x, weight))


def takes_kernel(x: torch.Tensor) -> bool:
    """Whether a call on x runs the Triton kernel: a kernel dtype (fp32 only while cuDNN may use TF32),
    whole 32-channel chunks, Triton for x's device."""
    return (
        x.dtype in KERNEL_DTYPES
        and (x.dtype != torch.float32 or _backend.cudnn_convs_may_use_tf32())
        and x.shape[1] % CHUNK == 0
        and _backend.uses_kernel(x, _kernels)
    )


def _launch(x: torch.Tensor, weight: torch.Tensor, truncate_x: bool, tail_tiles: int, tail_segments: int) -> torch.Tensor:
    out = _empty_output(x, weight)
    if out.numel() == 0:
        return out
    # A channels-last weight gives contiguous 32-channel loads; the copy is small beside the conv.
    weight = weight.contiguous(memory_format=torch.channels_last_3d)
    if weight.dtype == torch.float32:
        weight = rounded_to_tf32(weight)
    rounds_x = x.dtype == torch.float32 and not truncate_x
    block_m, block_n1, block_n2, warps, stages = _backend.conv_tile(weight.shape[0], x.dtype, rounds_x)
    positions = out.numel() // out.shape[1]
    grid = (-(-positions // block_m), -(-weight.shape[0] // (block_n1 + block_n2)))
    shape_args = (*out.shape[1:], *x.stride(), *weight.stride())
    common = dict(
        IN_CHANNELS=x.shape[1],
        KT=weight.shape[2],
        KH=weight.shape[3],
        KW=weight.shape[4],
        CHUNK=CHUNK,
        ROUND_X=rounds_x,
        DOT_IN_FP32=_backend.INTERPRETER,
        INDEX64=_backend.index_needs_int64(x, weight, out),
    )
    with _backend.device_of(x):
        _kernels.conv3d_chunked_kernel[grid](
            x, weight, out, 0, 1, positions, *shape_args, **common,
            BLOCK_M=block_m, BLOCK_N1=block_n1, BLOCK_N2=block_n2, TAIL=False, num_warps=warps, num_stages=stages,
        )
        if tail_tiles and tail_segments > 1:
            # Rewrites the tail tiles the launch above summed in one run: one program each, one wave.
            _kernels.conv3d_chunked_kernel[(tail_tiles,)](
                x, weight, out, output_tiles(x, weight) - tail_tiles, tail_segments, positions, *shape_args,
                **common, BLOCK_M=TAIL_TILE, BLOCK_N1=TAIL_TILE, BLOCK_N2=0, TAIL=True, num_warps=8, num_stages=3,
            )
    return out


define_op(
    "wanops::conv3d_chunked",
    "(Tensor x, Tensor weight, bool truncate_x=False, int tail_tiles=0, int tail_segments=1) -> Tensor",
)


@torch.library.impl("wanops::conv3d_chunked", "default")
def _conv3d_chunked_impl(x, weight, truncate_x=False, tail_tiles=0, tail_segments=1):
    check_conv3d_chunked_args(x, weight, truncate_x, tail_tiles, tail_segments)
    if takes_kernel(x):
        return _launch(x, weight, truncate_x, tail_tiles, tail_segments)
    return conv3d_chunked_reference(x, weight, truncate_x)


@torch.library.register_fake("wanops::conv3d_chunked")
def _conv3d_chunked_fake(x, weight, truncate_x=False, tail_tiles=0, tail_segments=1):
    check_conv3d_chunked_args(x, weight, truncate_x, tail_tiles, tail_segments)
    return _empty_output(x, weight)


def _setup_context(ctx, inputs, output):
    x, weight = inputs[:2]
    ctx.save_for_backward(x, weight)


def _backward(ctx, grad):
    # The operand rounding (or truncation) is the identity to autograd, as in a TF32 conv's backward.
    x, weight = ctx.saved_tensors
    grad_x = torch.nn.grad.conv3d_input(x.shape, weight, grad) if ctx.needs_input_grad[0] else None
    grad_weight = torch.nn.grad.conv3d_weight(x, weight.shape, grad) if ctx.needs_input_grad[1] else None
    return grad_x, grad_weight, None, None, None


torch.library.register_autograd("wanops::conv3d_chunked", _backward, setup_context=_setup_context)
