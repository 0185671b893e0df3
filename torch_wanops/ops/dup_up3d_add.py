"""``wanops::dup_up3d_add``: ``main + DupUp3D(source)`` without materialising the shortcut.

Spec (the reference below): diffusers' ``DupUp3D.forward`` followed by the add of
``WanResidualUpBlock``; the output has the dtype of ``main`` and the strides of
that eager expression.
"""

from __future__ import annotations

import functools

import torch

from torch_wanops import _backend
from torch_wanops.ops._common import (
    define_op,
    elementwise_output_strides,
    is_channels_last,
    reference_strides,
    require,
    require_int,
    require_same_placement,
    require_tensor,
)

_kernels = _backend.kernel_module("dup_up3d_add")


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def expected_main_shape(source: torch.Tensor, factor_t: int, factor_s: int, repeats: int, drop_first: bool) -> tuple:
    batch, channels, frames, height, width = source.shape
    dropped = factor_t - 1 if drop_first else 0
    out_channels = channels * repeats // (factor_t * factor_s * factor_s)
    return (batch, out_channels, frames * factor_t - dropped, height * factor_s, width * factor_s)


def check_dup_up3d_add_types(
    main: object, source: object, factor_t: object, factor_s: object, repeats: object, drop_first: object
) -> None:
    """The Python-type half of the checks: cheap, and run before the dispatcher sees the call."""
    require_tensor(main, "main")
    require_tensor(source, "source")
    for value, name in ((factor_t, "factor_t"), (factor_s, "factor_s"), (repeats, "repeats")):
        require_int(value, name)
    if not isinstance(drop_first, bool):
        raise TypeError(f"drop_first must be a bool, got {type(drop_first).__name__}")


def check_dup_up3d_geometry(
    main: torch.Tensor, source: torch.Tensor, factor_t: int, factor_s: int, repeats: int, drop_first: bool,
    main_name: str = "main", source_name: str = "source", factor_prefix: str = "",
) -> None:
    """Raise ``ValueError`` naming the argument unless ``DupUp3D(source)`` with these factors has main's shape."""
    for value, name in ((factor_t, "factor_t"), (factor_s, "factor_s")):
        if not _is_power_of_two(value):
            raise ValueError(f"{factor_prefix}{name} must be a positive power of two, got {value}")
    if repeats <= 0:
        raise ValueError(f"{factor_prefix}repeats must be positive, got {repeats}")
    factor = factor_t * factor_s * factor_s
    require(
        source.shape[1] * repeats % factor == 0,
        ValueError,
        lambda: f"{factor_prefix}repeats={repeats} is inconsistent with {source_name}'s {source.shape[1]} channels: "
        f"channels * repeats must be a multiple of factor_t * factor_s**2 = {factor}",
    )
    expected = expected_main_shape(source, factor_t, factor_s, repeats, drop_first)
    require(
        tuple(main.shape) == expected,
        ValueError,
        lambda: f"{main_name} must have shape {expected} for this {source_name} and these factors, "
        f"got {tuple(main.shape)}",
    )


def check_dup_up3d_add_args(
    main: torch.Tensor, source: torch.Tensor, factor_t: int, factor_s: int, repeats: int, drop_first: bool
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_dup_up3d_add_types(main, source, factor_t, factor_s, repeats, drop_first)
    require_same_placement(main, "main", source, "source")
    check_dup_up3d_geometry(main, source, factor_t, factor_s, repeats, drop_first)


def dup_up3d(source: torch.Tensor, factor_t: int, factor_s: int, repeats: int, drop_first: bool) -> torch.Tensor:
    """diffusers' ``DupUp3D.forward``, operation for operation."""
    batch, _, frames, height, width = source.shape
    out_channels = source.shape[1] * repeats // (factor_t * factor_s * factor_s)
    x = source.repeat_interleave(repeats, dim=1)
    x = x.view(batch, out_channels, factor_t, factor_s, factor_s, frames, height, width)
    x = x.permute(0, 1, 5, 2, 6, 3, 7, 4).contiguous()
    x = x.view(batch, out_channels, frames * factor_t, height * factor_s, width * factor_s)
    if drop_first:
        x = x[:, :, factor_t - 1 :, :, :]
    return x


def dup_up3d_add_reference(
    main: torch.Tensor, source: torch.Tensor, factor_t: int, factor_s: int, repeats: int, drop_first: bool
) -> torch.Tensor:
    return main + dup_up3d(source, factor_t, factor_s, repeats, drop_first)


def _empty_output(main: torch.Tensor, strides) -> torch.Tensor:
    return torch.empty_strided(main.shape, strides, dtype=main.dtype, device=main.device)


# Per-launch layout work, cached by geometry (the fake computes it symbolically, uncached).
_cached_output_strides = functools.lru_cache(maxsize=4096)(elementwise_output_strides)


def _launch(main, source, factor_t, factor_s, repeats, drop_first):
    shortcut_strides = reference_strides(dup_up3d, (source,), (factor_t, factor_s, repeats, drop_first))
    out = _empty_output(main, _cached_output_strides(tuple(main.shape), tuple(main.stride()), shortcut_strides))
    if out.numel() == 0:
        return out
    batch, channels, frames, height, width = out.shape
    channel_inner = is_channels_last(out)
    inner_size = channels if channel_inner else width
    rows = out.numel() // inner_size
    tile_rows, block, warps = _backend.launch_tile(inner_size)
    grid = (-(-rows // tile_rows), -(-inner_size // block))
    with _backend.device_of(main):
        _kernels.dup_up3d_add_kernel[grid](
            main, source, out,
            channels, frames, height, width,
            factor_t - 1 if drop_first else 0,
            inner_size,
            rows,
            *main.stride(), *source.stride(), *out.stride(),
            FACTOR_T=factor_t,
            FACTOR_S=factor_s,
            REPEATS=repeats,
            INNER_IS_CHANNEL=channel_inner,
            INDEX64=_backend.index_needs_int64(main, source, out),
            ROWS=tile_rows,
            BLOCK=block,
            num_warps=warps,
        )
    return out


# Defined with define_op (torch.library.define) and impl rather than @custom_op: same contract
# (schema, fake, autograd), a third of the per-call dispatch overhead.
define_op(
    "wanops::dup_up3d_add", "(Tensor main, Tensor source, int factor_t, int factor_s, int repeats, bool drop_first) -> Tensor"
)


@torch.library.impl("wanops::dup_up3d_add", "default")
def _dup_up3d_add_impl(main, source, factor_t, factor_s, repeats, drop_first):
    # One kernel for every device: Triton where _backend allows it (CUDA, or CPU
    # under TRITON_INTERPRET=1), the exact torch reference everywhere else.
    check_dup_up3d_add_args(main, source, factor_t, factor_s, repeats, drop_first)
    if _backend.uses_kernel(main, _kernels):
        return _launch(main, source, factor_t, factor_s, repeats, drop_first)
    return dup_up3d_add_reference(main, source, factor_t, factor_s, repeats, drop_first)


@torch.library.register_fake("wanops::dup_up3d_add")
def _dup_up3d_add_fake(main, source, factor_t, factor_s, repeats, drop_first):
    check_dup_up3d_add_args(main, source, factor_t, factor_s, repeats, drop_first)
    # The shortcut's strides from the reference run on fake tensors; no data is made.
    shortcut = dup_up3d(source, factor_t, factor_s, repeats, drop_first)
    return _empty_output(main, elementwise_output_strides(main.shape, main.stride(), shortcut.stride()))


def _dup_up3d_add_setup_context(ctx, inputs, output):
    _, source, factor_t, factor_s, repeats, drop_first = inputs
    ctx.source_shape = tuple(source.shape)
    ctx.factors = (factor_t, factor_s, repeats, drop_first)


def dup_up3d_source_grad(grad: torch.Tensor, source_shape: tuple[int, ...], factor_t: int, factor_s: int,
                         repeats: int, drop_first: bool) -> torch.Tensor:
    """The gradient of ``DupUp3D(source)`` with respect to source, given the gradient of its output."""
    batch, channels, frames, height, width = source_shape
    if drop_first and factor_t > 1:
        # The dropped leading frames received no gradient.
        grad = torch.nn.functional.pad(grad, (0, 0, 0, 0, factor_t - 1, 0))
    out_channels = channels * repeats // (factor_t * factor_s * factor_s)
    grad = grad.reshape(batch, out_channels, frames, factor_t, height, factor_s, width, factor_s)
    grad = grad.permute(0, 1, 3, 5, 7, 2, 4, 6).reshape(batch, channels, repeats, frames, height, width)
    return grad.sum(dim=2)


def _dup_up3d_add_backward(ctx, grad):
    grad_source = dup_up3d_source_grad(grad, ctx.source_shape, *ctx.factors) if ctx.needs_input_grad[1] else None
    return grad, grad_source, None, None, None, None


torch.library.register_autograd(
    "wanops::dup_up3d_add", _dup_up3d_add_backward, setup_context=_dup_up3d_add_setup_context
)
