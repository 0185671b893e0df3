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
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torch_wanops import _backend
from torch_wanops.ops._common import (
    require,
    require_same_placement,
    require_tensor,
    rounded_to_tf32,
    truncated_to_tf32,
)

_kernels = _backend.kernel_module("conv3d_chunked")

# The channels summed per step: the K tile of the cuDNN kernels whose order the kernel follows.
CHUNK = 32
# The dtypes its kernel takes; fp32 only as TF32 (takes_kernel), the arithmetic cuDNN's fp32 convs use then.
KERNEL_DTYPES = (torch.bfloat16, torch.float16, torch.float32)


def check_conv3d_chunked_types(x: object, weight: object, truncate_x: object) -> None:
    """The Python-type half of the checks, run before the dispatcher sees the call."""
    require_tensor(x, "x")
    require_tensor(weight, "weight")
    if not isinstance(truncate_x, bool):
        raise TypeError(f"truncate_x must be a bool, got {type(truncate_x).__name__}")


def check_conv3d_chunked_args(x: object, weight: object, truncate_x: object = False) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_conv3d_chunked_types(x, weight, truncate_x)
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


def output_shape(x: torch.Tensor, weight: torch.Tensor) -> tuple:
    return (x.shape[0], weight.shape[0], *(x.shape[d] - weight.shape[d] + 1 for d in (2, 3, 4)))


def _empty_output(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The output, channels_last_3d with the canonical strides (size-1 dimensions included), as the fake allocates it."""
    return torch.empty(output_shape(x, weight), dtype=x.dtype, device=x.device, memory_format=torch.channels_last_3d)


def conv3d_chunked_reference(x: torch.Tensor, weight: torch.Tensor, truncate_x: bool = False) -> torch.Tensor:
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


def _launch(x: torch.Tensor, weight: torch.Tensor, truncate_x: bool) -> torch.Tensor:
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
    with _backend.device_of(x):
        _kernels.conv3d_chunked_kernel[grid](
            x, weight, out, positions, *out.shape[1:], *x.stride(), *weight.stride(),
            IN_CHANNELS=x.shape[1],
            KT=weight.shape[2],
            KH=weight.shape[3],
            KW=weight.shape[4],
            CHUNK=CHUNK,
            ROUND_X=rounds_x,
            DOT_IN_FP32=_backend.INTERPRETER,
            INDEX64=_backend.index_needs_int64(x, weight, out),
            BLOCK_M=block_m,
            BLOCK_N1=block_n1,
            BLOCK_N2=block_n2,
            num_warps=warps,
            num_stages=stages,
        )
    return out


torch.library.define("wanops::conv3d_chunked", "(Tensor x, Tensor weight, bool truncate_x=False) -> Tensor")


@torch.library.impl("wanops::conv3d_chunked", "default")
def _conv3d_chunked_impl(x, weight, truncate_x=False):
    check_conv3d_chunked_args(x, weight, truncate_x)
    if takes_kernel(x):
        return _launch(x, weight, truncate_x)
    return conv3d_chunked_reference(x, weight, truncate_x)


@torch.library.register_fake("wanops::conv3d_chunked")
def _conv3d_chunked_fake(x, weight, truncate_x=False):
    check_conv3d_chunked_args(x, weight, truncate_x)
    return _empty_output(x, weight)


def _setup_context(ctx, inputs, output):
    x, weight, _ = inputs
    ctx.save_for_backward(x, weight)


def _backward(ctx, grad):
    # The operand rounding (or truncation) is the identity to autograd, as in a TF32 conv's backward.
    x, weight = ctx.saved_tensors
    grad_x = torch.nn.grad.conv3d_input(x.shape, weight, grad) if ctx.needs_input_grad[0] else None
    grad_weight = torch.nn.grad.conv3d_weight(x, weight.shape, grad) if ctx.needs_input_grad[1] else None
    return grad_x, grad_weight, None


torch.library.register_autograd("wanops::conv3d_chunked", _backward, setup_context=_setup_context)
