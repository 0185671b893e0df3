"""``wanops::bias_add_contiguous``: a conv's bias add, written in contiguous (NCDHW) layout.

Spec (the reference below): ``(x + bias.view(1, C, 1, 1, 1)).contiguous()``, the
add rounded once from fp32 as ATen's ``add_`` rounds it; with ``residual``,
``((x + bias.view(1, C, 1, 1, 1)) + residual).contiguous()``, two adds each rounded
once. With ``residual_bias`` as well the residual is a raw conv output (a residual
block's 1x1x1 shortcut conv run without its bias) and the spec is
``((x + bias) + (residual + residual_bias)).contiguous()``, each add rounded once. It
lets a convolution run on channels_last_3d input without bias and still hand on
exactly the tensor that stock's NCDHW convolution (bias added in place afterwards),
and a residual block's ``x + shortcut`` after it, hand on.
"""

from __future__ import annotations

import torch

from torch_wanops import _backend
from torch_wanops.ops._common import require, require_channel_bias, require_same_placement, require_tensor

_kernels = _backend.kernel_module("bias_add_contiguous")


def check_bias_add_contiguous_types(x: object, bias: object, residual: object = None,
                                    residual_bias: object = None) -> None:
    """The Python-type half of the checks, run before the dispatcher sees the call."""
    require_tensor(x, "x")
    require_tensor(bias, "bias", ndim=1)
    require_tensor(residual, "residual", optional=True)
    require_tensor(residual_bias, "residual_bias", ndim=1, optional=True)
    if residual_bias is not None and residual is None:
        raise ValueError("residual_bias needs a residual to add it to")


def check_bias_add_contiguous_args(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None,
                                   residual_bias: torch.Tensor | None = None) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_bias_add_contiguous_types(x, bias, residual, residual_bias)
    require_channel_bias(x, bias)
    if residual_bias is not None:
        require_channel_bias(x, residual_bias, "residual_bias")
    if residual is not None:
        require_same_placement(x, "x", residual, "residual")
        require(
            residual.shape == x.shape,
            ValueError,
            lambda: f"residual must have the shape of x {tuple(x.shape)}, got {tuple(residual.shape)}",
        )


def bias_add_contiguous_reference(
    x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None = None,
    residual_bias: torch.Tensor | None = None,
) -> torch.Tensor:
    total = x + bias.view(1, -1, 1, 1, 1)
    if residual is not None:
        if residual_bias is not None:
            residual = residual + residual_bias.view(1, -1, 1, 1, 1)
        total = total + residual
    return total.contiguous()


def _launch(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None,
            residual_bias: torch.Tensor | None) -> torch.Tensor:
    batch, channels, frames, height, width = x.shape
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    # Without a residual (bias) the kernel never reads residual_ptr (residual_bias_ptr); x (bias) stands in.
    has_residual = residual is not None
    residual = residual if has_residual else x
    x_strides, residual_strides = list(x.stride()), list(residual.stride())
    if _backend.INTERPRETER and all(strides[3] == width * strides[4] for strides in (x_strides, residual_strides)):
        # The interpreter's cost is per program (one line each): where every row of a frame
        # follows the last in x and the residual, as in the output, a frame is one line.
        height, width = 1, height * width
    block_c, block_w, warps = _backend.transpose_tile(channels, width)
    c_blocks, w_blocks = -(-channels // block_c), -(-width // block_w)
    grid = _backend.line_tile_grid(batch * frames * height, c_blocks, w_blocks)
    with _backend.device_of(x):
        _kernels.bias_add_contiguous_kernel[grid](
            x, bias, out, residual, bias if residual_bias is None else residual_bias, channels, frames, height, width,
            c_blocks, w_blocks, *x_strides, *residual_strides,
            HAS_RESIDUAL=has_residual,
            HAS_RESIDUAL_BIAS=residual_bias is not None,
            INDEX64=_backend.index_needs_int64(x, out, residual),
            BLOCK_C=block_c,
            BLOCK_W=block_w,
            num_warps=warps,
        )
    return out


torch.library.define(
    "wanops::bias_add_contiguous",
    "(Tensor x, Tensor bias, Tensor? residual=None, Tensor? residual_bias=None) -> Tensor",
)


@torch.library.impl("wanops::bias_add_contiguous", "default")
def _bias_add_contiguous_impl(x, bias, residual=None, residual_bias=None):
    check_bias_add_contiguous_args(x, bias, residual, residual_bias)
    if _backend.uses_kernel(x, _kernels):
        return _launch(x, bias, residual, residual_bias)
    return bias_add_contiguous_reference(x, bias, residual, residual_bias)


@torch.library.register_fake("wanops::bias_add_contiguous")
def _bias_add_contiguous_fake(x, bias, residual=None, residual_bias=None):
    check_bias_add_contiguous_args(x, bias, residual, residual_bias)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


def _setup_context(ctx, inputs, output):
    ctx.has_residual = inputs[2] is not None
    ctx.has_residual_bias = inputs[3] is not None


def _backward(ctx, grad):
    bias_grad = grad.sum(dim=(0, 2, 3, 4))
    return grad, bias_grad, grad if ctx.has_residual else None, bias_grad if ctx.has_residual_bias else None


torch.library.register_autograd("wanops::bias_add_contiguous", _backward, setup_context=_setup_context)
