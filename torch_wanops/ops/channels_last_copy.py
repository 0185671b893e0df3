"""``wanops::channels_last_copy``: a 4-D or 5-D tensor copied into channels-last memory.

Spec (the reference below): ``x.contiguous(memory_format=...)`` for ``channels_last``
(4-D) or ``channels_last_3d`` (5-D), always into a fresh tensor with the canonical
channels-last strides, never x itself. Why it exists: cuDNN computes a conv with a
channels-last input channels-last, and ATen lays a contiguous weight out channels-last
on every such call with a generic strided copy (0.5-1.1 TB/s on an H200: 0.034 s of a
Wan2.2 bf16 decode, its (1024, 1024, 3, 3, 3) weights). Handing the conv this op's copy
instead gives cuDNN the same tensor, so the same bits, and ATen copies nothing more.
The Triton kernel takes contiguous x (a transpose of each (C, S) block); other layouts
take the reference.
"""

from __future__ import annotations

import torch

from torch_wanops import _backend
from torch_wanops.ops._common import channels_last_format, define_op, require_tensor

_kernels = _backend.kernel_module("channels_last_copy")


def check_channels_last_copy_args(x: object) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    require_tensor(x, "x", ndim=(4, 5))


def _empty_output(x: torch.Tensor) -> torch.Tensor:
    return torch.empty(x.shape, dtype=x.dtype, device=x.device, memory_format=channels_last_format(x))


def channels_last_copy_reference(x: torch.Tensor) -> torch.Tensor:
    return _empty_output(x).copy_(x)


def _launch(x: torch.Tensor) -> torch.Tensor:
    out = _empty_output(x)
    if out.numel() == 0:
        return out
    batch, channels = x.shape[:2]
    positions = x.numel() // (batch * channels)
    block_c, block_s, warps = _backend.channels_last_copy_tile(channels, positions, x.element_size())
    c_blocks, s_blocks = -(-channels // block_c), -(-positions // block_s)
    with _backend.device_of(x):
        _kernels.channels_last_copy_kernel[(batch * c_blocks * s_blocks,)](
            x, out, channels, positions, c_blocks, s_blocks,
            INDEX64=_backend.index_needs_int64(x),
            BLOCK_C=block_c,
            BLOCK_S=block_s,
            num_warps=warps,
        )
    return out


define_op("wanops::channels_last_copy", "(Tensor x) -> Tensor")


@torch.library.impl("wanops::channels_last_copy", "default")
def _channels_last_copy_impl(x):
    check_channels_last_copy_args(x)
    if x.is_contiguous() and _backend.uses_kernel(x, _kernels):
        return _launch(x)
    return channels_last_copy_reference(x)


@torch.library.register_fake("wanops::channels_last_copy")
def _channels_last_copy_fake(x):
    check_channels_last_copy_args(x)
    return _empty_output(x)


def _backward(ctx, grad):
    return grad  # the copy keeps every value in place


torch.library.register_autograd("wanops::channels_last_copy", _backward)
