"""``wanops::wan_rms_norm``: diffusers' ``WanRMS_norm`` (then SiLU), computed by stock's own code, as one op.

Spec (the reference below, which is also the implementation): ``WanRMS_norm.forward`` of
the installed diffusers, run on a stand-in holding ``gamma``, ``scale``, ``channel_first``
and ``bias`` (``None``: the float 0.0 of a bias-free norm), then ``F.silu`` when ``silu``.
Eagerly that is exactly stock's computation. Its point is ``torch.compile``: Inductor
decomposes a norm left in the graph and generates its own reduction, which sums the
channels in another order than ATen's kernel (the compiled Wan2.1 bf16 480x832 decode
differed from stock in 41% of the first chunk's values, through the norm after the mid
block's attention, gpu-logs/session22/B). As one custom op the graph calls ATen's kernels,
so the decoder's norms in layouts ``rms_norm_cat_pad_5d`` does not take keep stock's bits
compiled as well.
"""

from __future__ import annotations

import types

import torch
import torch.nn.functional as F
from diffusers.models.autoencoders.autoencoder_kl_wan import WanRMS_norm

from torch_wanops.ops._common import define_op, require, require_tensor


def wan_norm_shape(x: torch.Tensor, channel_first: bool) -> tuple[int, ...]:
    """The shape WanRMS_norm gives gamma (and bias) for x: (C, 1, ..., 1) channel-first, (C,) otherwise."""
    return (x.shape[1], *(1,) * (x.dim() - 2)) if channel_first else (x.shape[-1],)


def check_wan_rms_norm_args(
    x: object, gamma: object, scale: object, channel_first: object, bias: object, silu: object
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    require_tensor(x, "x", ndim=(3, 4, 5))
    require_tensor(gamma, "gamma", ndim=tuple(range(1, 6)))
    require_tensor(bias, "bias", ndim=tuple(range(1, 6)), optional=True)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"scale must be a float, got {type(scale).__name__}")
    for name, flag in (("channel_first", channel_first), ("silu", silu)):
        if not isinstance(flag, bool):
            raise TypeError(f"{name} must be a bool, got {type(flag).__name__}")
    require(x.is_floating_point(), TypeError, lambda: f"x must be a floating-point tensor, got {x.dtype}")
    expected = wan_norm_shape(x, channel_first)
    for name, tensor in (("gamma", gamma), ("bias", bias)):
        if tensor is None:
            continue
        require(
            tuple(tensor.shape) == expected,
            ValueError,
            lambda name=name, tensor=tensor: f"{name} must have WanRMS_norm's shape {expected} for x, got "
            f"{tuple(tensor.shape)}",
        )
        require(
            tensor.device == x.device,
            ValueError,
            lambda name=name, tensor=tensor: f"{name} must be on the device of x ({x.device}), got {tensor.device}",
        )


def wan_rms_norm_reference(
    x: torch.Tensor,
    gamma: torch.Tensor,
    scale: float,
    channel_first: bool,
    bias: torch.Tensor | None,
    silu: bool,
) -> torch.Tensor:
    stand_in = types.SimpleNamespace(gamma=gamma, scale=scale, channel_first=channel_first,
                                     bias=0.0 if bias is None else bias)
    out = WanRMS_norm.forward(stand_in, x)
    return F.silu(out) if silu else out


define_op(
    "wanops::wan_rms_norm",
    "(Tensor x, Tensor gamma, float scale, bool channel_first, Tensor? bias, bool silu) -> Tensor",
)


@torch.library.impl("wanops::wan_rms_norm", "default")
def _wan_rms_norm_impl(x, gamma, scale, channel_first, bias, silu):
    check_wan_rms_norm_args(x, gamma, scale, channel_first, bias, silu)
    return wan_rms_norm_reference(x, gamma, scale, channel_first, bias, silu)


@torch.library.register_fake("wanops::wan_rms_norm")
def _wan_rms_norm_fake(x, gamma, scale, channel_first, bias, silu):
    # Stock's ops on the fake tensors: their fakes give each output the strides the real ops give.
    check_wan_rms_norm_args(x, gamma, scale, channel_first, bias, silu)
    return wan_rms_norm_reference(x, gamma, scale, channel_first, bias, silu)


def _setup_context(ctx, inputs, output):
    x, gamma, scale, channel_first, bias, silu = inputs
    ctx.save_for_backward(x, gamma, bias)
    ctx.settings = (scale, channel_first, silu)


def _backward(ctx, grad):
    # Stock's own backward: the forward again with autograd on, differentiated by ATen.
    x, gamma, bias = ctx.saved_tensors
    scale, channel_first, silu = ctx.settings
    needed = (ctx.needs_input_grad[0], ctx.needs_input_grad[1], ctx.needs_input_grad[4])
    inputs = [None if t is None else t.detach().requires_grad_(need) for t, need in zip((x, gamma, bias), needed)]
    with torch.enable_grad():
        out = wan_rms_norm_reference(inputs[0], inputs[1], scale, channel_first, inputs[2], silu)
    wanted = [t for t in inputs if t is not None and t.requires_grad]
    grads = iter(torch.autograd.grad(out, wanted, grad) if wanted else ())
    x_grad, gamma_grad, bias_grad = (next(grads) if t is not None and t.requires_grad else None for t in inputs)
    return x_grad, gamma_grad, None, None, bias_grad, None


torch.library.register_autograd("wanops::wan_rms_norm", _backward, setup_context=_setup_context)
