"""``wanops::bias_add_contiguous``: a conv's bias add, written in contiguous (NCDHW) layout.

Spec (the reference below): ``(x + bias.view(1, C, 1, 1, 1)).contiguous()``, the
add rounded once from fp32 as ATen's ``add_`` rounds it; with ``residual``,
``((x + bias.view(1, C, 1, 1, 1)) + residual).contiguous()``, two adds each rounded
once. With ``residual_bias`` as well the residual is a raw conv output (a residual
block's 1x1x1 shortcut conv run without its bias) and the spec is
``((x + bias) + (residual + residual_bias)).contiguous()``, each add rounded once. It
lets a convolution run on channels_last_3d input without bias and still hand on
exactly the tensor that stock's NCDHW convolution (bias added in place afterwards),
and a residual block's ``x + shortcut`` after it, hand on. With DupUp3D factors
(``dup_factor_t``, ``dup_factor_s``, ``dup_repeats``, ``dup_drop_first``; all 1 and False by
default, the identity) the residual is a DupUp3D source and the spec is
``((x + bias) + DupUp3D(residual)).contiguous()``: a Wan2.2 up block's shortcut added in the
bias pass of the conv before it, without the shortcut or the biased conv output in memory. With
``frame_groups`` G > 1 (no residual) the result is laid out as a Wan temporal upsampler lays out its
time conv's output: the C channels are G groups whose frames interleave, and the spec is
``(x + bias).view(B, G, C // G, T, H, W)`` with each group's frame ``t`` at frame ``G * t + i``:
shape ``(B, C // G, G * T, H, W)``, contiguous (stock's ``torch.stack`` of the groups along a new
frame axis, then its reshape), without the stack's copy.

``wanops::bias_add_contiguous_norm`` (same arguments) returns that tensor and its fp32 L2
norm over channels, shape ``(B, 1, T, H, W)``, in ``channel_norm_kernel``'s order with one block
(``channel_norm_reference(out)``): where that order is ATen's CUDA order for the output's geometry
(``rms_norm_cat_pad_5d.kernel_norm_is_atens`` with ATen not splitting the columns), it is the
norm the next ``rms_norm_cat_pad_5d`` would reduce from the output, computed in the same pass.
"""

from __future__ import annotations

import torch

from torch_wanops import _backend
from torch_wanops.ops._common import (
    define_op,
    require,
    require_channel_bias,
    require_int,
    require_same_placement,
    require_tensor,
)
from torch_wanops.ops.dup_up3d_add import check_dup_up3d_geometry, dup_up3d, dup_up3d_source_grad
from torch_wanops.ops.rms_norm_cat_pad_5d import channel_norm_reference

_kernels = _backend.kernel_module("bias_add_contiguous")


def _is_identity_dup(factor_t: int, factor_s: int, repeats: int) -> bool:
    return factor_t == factor_s == repeats == 1


def check_bias_add_contiguous_types(x: object, bias: object, residual: object = None, residual_bias: object = None,
                                    dup_factor_t: object = 1, dup_factor_s: object = 1, dup_repeats: object = 1,
                                    dup_drop_first: object = False) -> None:
    """The Python-type half of the checks, run before the dispatcher sees the call."""
    require_tensor(x, "x")
    require_tensor(bias, "bias", ndim=1)
    require_tensor(residual, "residual", optional=True)
    require_tensor(residual_bias, "residual_bias", ndim=1, optional=True)
    for value, name in ((dup_factor_t, "dup_factor_t"), (dup_factor_s, "dup_factor_s"), (dup_repeats, "dup_repeats")):
        require_int(value, name)
    if not isinstance(dup_drop_first, bool):
        raise TypeError(f"dup_drop_first must be a bool, got {type(dup_drop_first).__name__}")
    if residual_bias is not None and residual is None:
        raise ValueError("residual_bias needs a residual to add it to")
    if not _is_identity_dup(dup_factor_t, dup_factor_s, dup_repeats):
        if residual is None:
            raise ValueError("dup_factor_t, dup_factor_s and dup_repeats describe a residual: pass its DupUp3D source")
        if residual_bias is not None:
            raise ValueError("residual_bias cannot be combined with DupUp3D factors (dup_factor_t, dup_factor_s, "
                             "dup_repeats)")


def check_bias_add_contiguous_args(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None,
                                   residual_bias: torch.Tensor | None = None, dup_factor_t: int = 1,
                                   dup_factor_s: int = 1, dup_repeats: int = 1, dup_drop_first: bool = False) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_bias_add_contiguous_types(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats,
                                    dup_drop_first)
    require_channel_bias(x, bias)
    if residual_bias is not None:
        require_channel_bias(x, residual_bias, "residual_bias")
    if residual is None:
        return
    require_same_placement(x, "x", residual, "residual")
    if _is_identity_dup(dup_factor_t, dup_factor_s, dup_repeats):
        require(
            residual.shape == x.shape,
            ValueError,
            lambda: f"residual must have the shape of x {tuple(x.shape)}, got {tuple(residual.shape)}",
        )
    else:
        check_dup_up3d_geometry(x, residual, dup_factor_t, dup_factor_s, dup_repeats, dup_drop_first,
                                main_name="x", source_name="residual", factor_prefix="dup_")


def check_frame_groups(x: torch.Tensor, residual: torch.Tensor | None, frame_groups: object) -> None:
    """``frame_groups``: a positive int dividing x's channels, and 1 with a residual."""
    require_int(frame_groups, "frame_groups")
    if frame_groups < 1:
        raise ValueError(f"frame_groups must be positive, got {frame_groups}")
    if frame_groups > 1 and residual is not None:
        raise ValueError("frame_groups cannot be combined with a residual")
    if x.dim() == 5 and x.shape[1] % frame_groups:
        raise ValueError(f"frame_groups={frame_groups} must divide x's {x.shape[1]} channels")


def interleave_frame_groups(x: torch.Tensor, frame_groups: int) -> torch.Tensor:
    """(B, G * C, T, H, W) as (B, C, G * T, H, W), group i's frame t at frame G * t + i: stock's temporal upsampler
    (its reshape, ``torch.stack`` of the groups along dim 3 and reshape), a contiguous copy."""
    if frame_groups == 1:
        return x
    batch, channels, frames, height, width = x.shape
    groups = x.reshape(batch, frame_groups, channels // frame_groups, frames, height, width)
    return torch.stack([groups[:, i] for i in range(frame_groups)], 3).reshape(
        batch, channels // frame_groups, frames * frame_groups, height, width)


def bias_add_contiguous_reference(
    x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None = None,
    residual_bias: torch.Tensor | None = None, dup_factor_t: int = 1, dup_factor_s: int = 1, dup_repeats: int = 1,
    dup_drop_first: bool = False, frame_groups: int = 1,
) -> torch.Tensor:
    total = x + bias.view(1, -1, 1, 1, 1)
    if residual is not None:
        if residual_bias is not None:
            residual = residual + residual_bias.view(1, -1, 1, 1, 1)
        if not _is_identity_dup(dup_factor_t, dup_factor_s, dup_repeats):
            residual = dup_up3d(residual, dup_factor_t, dup_factor_s, dup_repeats, dup_drop_first)
        total = total + residual
    return interleave_frame_groups(total, frame_groups).contiguous()


def _output_shape(x: torch.Tensor, frame_groups: int) -> tuple[int, ...]:
    batch, channels, frames, height, width = x.shape
    return batch, channels // frame_groups, frames * frame_groups, height, width


def _launch(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None, residual_bias: torch.Tensor | None,
            dup_factor_t: int, dup_factor_s: int, dup_repeats: int, dup_drop_first: bool,
            frame_groups: int) -> torch.Tensor:
    batch, channels, frames, height, width = x.shape
    out = torch.empty(_output_shape(x, frame_groups), dtype=x.dtype, device=x.device)
    if out.numel() == 0:
        return out
    # Without a residual (bias) the kernel never reads residual_ptr (residual_bias_ptr); x (bias) stands in.
    has_residual = residual is not None
    residual = residual if has_residual else x
    identity_dup = _is_identity_dup(dup_factor_t, dup_factor_s, dup_repeats)
    block_c, block_w, warps = _backend.transpose_tile(channels, width, not identity_dup)
    c_blocks, w_blocks = -(-channels // block_c), -(-width // block_w)
    lines = batch * frames * height
    lines_per_program = _backend.lines_per_program(block_c * block_w, lines)
    grid = _backend.line_tile_grid(-(-lines // lines_per_program), c_blocks, w_blocks)
    with _backend.device_of(x):
        _kernels.bias_add_contiguous_kernel[grid](
            x, bias, out, residual, bias if residual_bias is None else residual_bias, channels, frames, height, width,
            lines, c_blocks, w_blocks, *_backend.division_magic(height), *_backend.division_magic(frames),
            dup_factor_t - 1 if dup_drop_first else 0, *x.stride(), *residual.stride(),
            HAS_RESIDUAL=has_residual,
            HAS_RESIDUAL_BIAS=residual_bias is not None,
            FACTOR_T=dup_factor_t,
            FACTOR_S=dup_factor_s,
            REPEATS=dup_repeats,
            FRAME_GROUPS=frame_groups,
            INDEX64=_backend.index_needs_int64(x, out, residual),
            BLOCK_C=block_c,
            BLOCK_W=block_w,
            LINES=lines_per_program,
            num_warps=warps,
        )
    return out


define_op(
    "wanops::bias_add_contiguous",
    "(Tensor x, Tensor bias, Tensor? residual=None, Tensor? residual_bias=None, int dup_factor_t=1, "
    "int dup_factor_s=1, int dup_repeats=1, bool dup_drop_first=False, int frame_groups=1) -> Tensor",
)


@torch.library.impl("wanops::bias_add_contiguous", "default")
def _bias_add_contiguous_impl(x, bias, residual=None, residual_bias=None, dup_factor_t=1, dup_factor_s=1,
                              dup_repeats=1, dup_drop_first=False, frame_groups=1):
    args = (x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats, dup_drop_first)
    check_bias_add_contiguous_args(*args)
    check_frame_groups(x, residual, frame_groups)
    if _backend.uses_kernel(x, _kernels):
        return _launch(*args, frame_groups)
    return bias_add_contiguous_reference(*args, frame_groups)


@torch.library.register_fake("wanops::bias_add_contiguous")
def _bias_add_contiguous_fake(x, bias, residual=None, residual_bias=None, dup_factor_t=1, dup_factor_s=1,
                              dup_repeats=1, dup_drop_first=False, frame_groups=1):
    check_bias_add_contiguous_args(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats,
                                   dup_drop_first)
    check_frame_groups(x, residual, frame_groups)
    return torch.empty(_output_shape(x, frame_groups), dtype=x.dtype, device=x.device)


def _setup_context(ctx, inputs, output):
    residual, residual_bias = inputs[2], inputs[3]
    ctx.residual_shape = None if residual is None else tuple(residual.shape)
    ctx.has_residual_bias = residual_bias is not None
    ctx.dup_factors = tuple(inputs[4:8])
    ctx.frame_groups = inputs[8]


def _backward(ctx, grad):
    if ctx.frame_groups > 1:  # back to x's (B, G * C, T, H, W): group i's frames are the output's i, G + i, ...
        batch, channels, frames, height, width = grad.shape
        groups = ctx.frame_groups
        grad = grad.reshape(batch, channels, frames // groups, groups, height, width).permute(0, 3, 1, 2, 4, 5).reshape(
            batch, channels * groups, frames // groups, height, width)
    bias_grad = grad.sum(dim=(0, 2, 3, 4))
    residual_grad = None
    if ctx.residual_shape is not None:
        identity = _is_identity_dup(*ctx.dup_factors[:3])
        residual_grad = grad if identity else dup_up3d_source_grad(grad, ctx.residual_shape, *ctx.dup_factors)
    return (grad, bias_grad, residual_grad, bias_grad if ctx.has_residual_bias else None) + (None,) * 5


torch.library.register_autograd("wanops::bias_add_contiguous", _backward, setup_context=_setup_context)


def bias_add_contiguous_norm_reference(
    x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None = None,
    residual_bias: torch.Tensor | None = None, dup_factor_t: int = 1, dup_factor_s: int = 1, dup_repeats: int = 1,
    dup_drop_first: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    out = bias_add_contiguous_reference(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats,
                                        dup_drop_first)
    return out, channel_norm_reference(out)


def _empty_norm(x: torch.Tensor) -> torch.Tensor:
    batch, _, frames, height, width = x.shape
    return torch.empty((batch, 1, frames, height, width), dtype=torch.float32, device=x.device)


def _launch_norm(x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None,
                 residual_bias: torch.Tensor | None, dup_factor_t: int, dup_factor_s: int, dup_repeats: int,
                 dup_drop_first: bool) -> tuple[torch.Tensor, torch.Tensor]:
    batch, channels, frames, height, width = x.shape
    out, norm = torch.empty(x.shape, dtype=x.dtype, device=x.device), _empty_norm(x)
    if norm.numel() == 0 or channels == 0:
        return out, norm.zero_()  # the norm of no channels
    has_residual = residual is not None
    residual = residual if has_residual else x  # not read without a residual
    identity_dup = _is_identity_dup(dup_factor_t, dup_factor_s, dup_repeats)
    block_w, groups, warps = _backend.norm_epilogue_tile(channels, width, not identity_dup)
    w_blocks = -(-width // block_w)
    grid = _backend.line_tile_grid(batch * frames * height, 1, w_blocks)
    with _backend.device_of(x):
        _kernels.bias_add_norm_kernel[grid](
            x, bias, out, norm, residual, bias if residual_bias is None else residual_bias, channels, frames, height,
            width, w_blocks, *_backend.division_magic(height), *_backend.division_magic(frames),
            dup_factor_t - 1 if dup_drop_first else 0, *x.stride(), *residual.stride(),
            HAS_RESIDUAL=has_residual,
            HAS_RESIDUAL_BIAS=residual_bias is not None,
            FACTOR_T=dup_factor_t,
            FACTOR_S=dup_factor_s,
            REPEATS=dup_repeats,
            INDEX64=_backend.index_needs_int64(x, out, residual),
            GROUPS=groups,
            BLOCK_W=block_w,
            num_warps=warps,
        )
    return out, norm


define_op(
    "wanops::bias_add_contiguous_norm",
    "(Tensor x, Tensor bias, Tensor? residual=None, Tensor? residual_bias=None, int dup_factor_t=1, "
    "int dup_factor_s=1, int dup_repeats=1, bool dup_drop_first=False) -> (Tensor, Tensor)",
)


@torch.library.impl("wanops::bias_add_contiguous_norm", "default")
def _bias_add_contiguous_norm_impl(x, bias, residual=None, residual_bias=None, dup_factor_t=1, dup_factor_s=1,
                                   dup_repeats=1, dup_drop_first=False):
    args = (x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats, dup_drop_first)
    check_bias_add_contiguous_args(*args)
    if _backend.uses_kernel(x, _kernels):
        return _launch_norm(*args)
    return bias_add_contiguous_norm_reference(*args)


@torch.library.register_fake("wanops::bias_add_contiguous_norm")
def _bias_add_contiguous_norm_fake(x, bias, residual=None, residual_bias=None, dup_factor_t=1, dup_factor_s=1,
                                   dup_repeats=1, dup_drop_first=False):
    check_bias_add_contiguous_args(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats,
                                   dup_drop_first)
    return torch.empty(x.shape, dtype=x.dtype, device=x.device), _empty_norm(x)


def _setup_norm_context(ctx, inputs, output):
    ctx.optional = tuple(t is not None for t in inputs[2:4])
    ctx.dup_factors = tuple(inputs[4:8])
    ctx.save_for_backward(*(t for t in inputs[:4] if t is not None))


def _norm_backward(ctx, grad_out, grad_norm):
    # The norm's gradient is ATen's: recompute the sum and its norm under autograd and ask it.
    inputs = [t.detach().requires_grad_() for t in ctx.saved_tensors]
    optional = iter(inputs[2:])
    residual, residual_bias = (next(optional) if present else None for present in ctx.optional)
    with torch.enable_grad():
        out = bias_add_contiguous_reference(inputs[0], inputs[1], residual, residual_bias, *ctx.dup_factors)
        norm = torch.linalg.vector_norm(out.float(), dim=1, keepdim=True)
        pairs = [(o, g) for o, g in ((out, grad_out), (norm, grad_norm)) if g is not None]
        grads = iter(torch.autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True))
    grad_x, grad_bias = next(grads), next(grads)
    grad_residual, grad_residual_bias = (next(grads) if present else None for present in ctx.optional)
    return (grad_x, grad_bias, grad_residual, grad_residual_bias) + (None,) * 4


torch.library.register_autograd("wanops::bias_add_contiguous_norm", _norm_backward,
                                setup_context=_setup_norm_context)
