"""``wanops::bias_add_contiguous``: a conv's bias add, written in contiguous (NCDHW) layout.

Spec (the reference below): ``(x + bias.view(1, C, 1, 1, 1)).contiguous()``, the
add rounded once from fp32 as ATen's ``add_`` rounds it. It lets a convolution run
on channels_last_3d input without bias and still hand on exactly the tensor that
stock's NCDHW convolution (bias added in place afterwards) hands on.
"""

from __future__ import annotations

import torch

from torch_wanops import _backend
from torch_wanops.ops._common import require, require_same_placement, require_tensor

_kernels = _backend.kernel_module("bias_add_contiguous")


def check_bias_add_contiguous_types(x: object, bias: object) -> None:
    """The Python-type half of the checks, run before the dispatcher sees the call."""
    require_tensor(x, "x")
    require_tensor(bias, "bias", ndim=1)


def check_bias_add_contiguous_args(x: torch.Tensor, bias: torch.Tensor) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_bias_add_contiguous_types(x, bias)
    require_same_placement(x, "x", bias, "bias")
    require(
        bias.shape[0] == x.shape[1],
        ValueError,
        lambda: f"bias must have one entry per channel of x ({x.shape[1]}), got {bias.shape[0]}",
    )


def bias_add_contiguous_reference(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return (x + bias.view(1, -1, 1, 1, 1)).contiguous()


def _launch(x: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    batch, channels, frames, height, width = x.shape
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    # 32 x 32 tiles: both the channel-fastest reads and the width-fastest writes stay coalesced.
    block_c = _backend.fit_grid_axis(channels, min(32, _backend.next_power_of_2(channels)))
    block_w = _backend.fit_grid_axis(width, min(32, _backend.next_power_of_2(width)))
    grid = (batch * frames * height, -(-channels // block_c), -(-width // block_w))
    with _backend.device_of(x):
        _kernels.bias_add_contiguous_kernel[grid](
            x, bias, out, channels, frames, height, width, *x.stride(),
            INDEX64=_backend.index_needs_int64(x, out),
            BLOCK_C=block_c,
            BLOCK_W=block_w,
            num_warps=4,
        )
    return out


torch.library.define("wanops::bias_add_contiguous", "(Tensor x, Tensor bias) -> Tensor")


@torch.library.impl("wanops::bias_add_contiguous", "default")
def _bias_add_contiguous_impl(x, bias):
    check_bias_add_contiguous_args(x, bias)
    if _backend.uses_kernel(x, _kernels):
        return _launch(x, bias)
    return bias_add_contiguous_reference(x, bias)


@torch.library.register_fake("wanops::bias_add_contiguous")
def _bias_add_contiguous_fake(x, bias):
    check_bias_add_contiguous_args(x, bias)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)


def _backward(ctx, grad):
    return grad, grad.sum(dim=(0, 2, 3, 4))


torch.library.register_autograd("wanops::bias_add_contiguous", _backward)
