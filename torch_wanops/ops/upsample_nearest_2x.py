"""``wanops::upsample_nearest_2x``: a Wan upsampler's frames, 2x nearest-upsampled, in one pass.

Spec (the reference below): what diffusers' ``WanResample`` hands its ``Conv2d`` in the
upsampling modes, ``WanUpsample(scale_factor=(2.0, 2.0), mode="nearest-exact")`` of
``x.permute(0, 2, 1, 3, 4).reshape(B * T, C, H, W)``, for x of shape (B, C, T, H, W):
each value copied into a 2x2 block (for a scale of exactly 2, nearest-exact's source
pixel is ``dst // 2``), so every dtype comes out exact. Stock gets there in four passes
(the frame-major copy, the fp32 cast, the upsample, the cast back); the kernel reads x
once, through its strides, and writes the (B * T, C, 2H, 2W) result once, in stock's
memory format or, with ``channels_last``, in channels_last, the layout cuDNN computes
the following Conv2d in.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torch_wanops import _backend
from torch_wanops.ops._common import define_op, reference_strides, require_tensor
from torch_wanops.ops.cat_pad_5d import launch_cat_pad_5d

# The kernel is cat_pad_5d's, reading x upsampled (its UPSAMPLE constexpr).
_kernels = _backend.kernel_module("cat_pad_5d")

_NO_PADDING = (0, 0, 0, 0, 0, 0)


def check_upsample_nearest_2x_args(x: object, channels_last: object) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    require_tensor(x, "x")
    if not isinstance(channels_last, bool):
        raise TypeError(f"channels_last must be a bool, got {type(channels_last).__name__}")


def upsample_nearest_2x_reference(x: torch.Tensor, channels_last: bool = False) -> torch.Tensor:
    """Stock's steps, then the requested layout (``.contiguous`` of a fresh tensor: no alias of x)."""
    batch, channels, frames, height, width = x.shape
    frames_2d = x.permute(0, 2, 1, 3, 4).reshape(batch * frames, channels, height, width)
    out = F.interpolate(frames_2d.float(), scale_factor=(2.0, 2.0), mode="nearest-exact").type_as(x)
    return out.contiguous(memory_format=torch.channels_last) if channels_last else out


def _meta_output(x: torch.Tensor, channels_last: bool) -> torch.Tensor:
    # The reference on a meta twin of x, not on x's device: for CUDA tensors with fewer
    # than 4 channels, the fake upsample gives a contiguous output where the real one
    # (and the meta one) keeps channels_last, and the fake op must allocate as the launcher.
    twin = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
    return upsample_nearest_2x_reference(twin, channels_last)


def _launch(x: torch.Tensor, channels_last: bool) -> torch.Tensor:
    batch, channels, frames, height, width = x.shape
    # The (B * T, C, 2H, 2W) output, as the kernel's 5-D (B, C, T, 2H, 2W) view: frame n = b * T + t.
    strides_4d = reference_strides(upsample_nearest_2x_reference, (x,), (channels_last,))
    strides_5d = (frames * strides_4d[0], strides_4d[1], strides_4d[0], strides_4d[2], strides_4d[3])
    out, _ = launch_cat_pad_5d(x, None, _NO_PADDING, 0, strides_5d, upsample=2)
    return out.permute(0, 2, 1, 3, 4).reshape(batch * frames, channels, 2 * height, 2 * width)


define_op("wanops::upsample_nearest_2x", "(Tensor x, bool channels_last=False) -> Tensor")


@torch.library.impl("wanops::upsample_nearest_2x", "default")
def _upsample_nearest_2x_impl(x, channels_last=False):
    check_upsample_nearest_2x_args(x, channels_last)
    if _backend.uses_kernel(x, _kernels):
        return _launch(x, channels_last)
    return upsample_nearest_2x_reference(x, channels_last)


@torch.library.register_fake("wanops::upsample_nearest_2x")
def _upsample_nearest_2x_fake(x, channels_last=False):
    check_upsample_nearest_2x_args(x, channels_last)
    out = _meta_output(x, channels_last)
    return x.new_empty_strided(out.shape, out.stride())


def _setup_context(ctx, inputs, output):
    ctx.shape = inputs[0].shape


def _backward(ctx, grad):
    # Each input pixel was copied into a 2x2 block: its gradient is the block's sum, computed
    # as stock's autograd does: in fp32 (stock upsamples in fp32 whatever the dtype), adding
    # the block's values in ATen's nearest-backward order, (top-left + top-right) + bottom-left
    # + bottom-right, then rounded to grad's dtype once.
    batch, channels, frames, height, width = ctx.shape
    blocks = grad.float().reshape(batch, frames, channels, height, 2, width, 2)
    total = blocks[:, :, :, :, 0, :, 0] + blocks[:, :, :, :, 0, :, 1]
    total = total + blocks[:, :, :, :, 1, :, 0]
    total = total + blocks[:, :, :, :, 1, :, 1]
    return total.to(grad.dtype).permute(0, 2, 1, 3, 4), None


torch.library.register_autograd("wanops::upsample_nearest_2x", _backward, setup_context=_setup_context)
