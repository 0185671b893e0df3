"""Typed entry points for the wanops custom ops; importing this registers them."""

from __future__ import annotations

from collections.abc import Sequence

import torch

# Importing these modules registers the wanops ops.
from torch_wanops.ops._common import require_int
from torch_wanops.ops._inductor import register_inductor_fallbacks
from torch_wanops.ops.bias_add_contiguous import check_bias_add_contiguous_types
from torch_wanops.ops.cat_pad_5d import check_cat_pad_5d_types
from torch_wanops.ops.channels_last_copy import check_channels_last_copy_args
from torch_wanops.ops.conv3d_chunked import check_conv3d_chunked_types
from torch_wanops.ops.dup_up3d_add import check_dup_up3d_add_types
from torch_wanops.ops.refresh_cache import check_refresh_cache_args
from torch_wanops.ops.rms_norm_cat_pad_5d import check_rms_norm_cat_pad_5d_types
from torch_wanops.ops.upsample_nearest_2x import check_upsample_nearest_2x_args
from torch_wanops.ops.wan_rms_norm import check_wan_rms_norm_args

# Before any graph meets the ops: Inductor's implicit fallback for them can take minutes (ops/_inductor.py).
register_inductor_fallbacks()


def cat_pad_5d(
    x: torch.Tensor,
    cache: torch.Tensor | None,
    padding: Sequence[int],
    keep_cache_frames: int = 0,
    channels_last: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Build a causal Conv3d input from ``cache`` and ``x`` in one pass.

    Returns ``(padded, next_cache)``: ``padded`` equals
    ``F.pad(torch.cat([cache, x], 2), padding)`` with the front padding reduced by
    the cached frames (same bits, same strides; dense channels_last_3d with
    ``channels_last``); ``next_cache`` holds its last ``min(keep_cache_frames, frames)``
    frames without the spatial border, in the same memory format, or is an empty
    ``(B, C, 0, H, W)`` tensor when ``keep_cache_frames == 0``.
    ``padding = (w_left, w_right, h_top, h_bottom, t_front, t_back)``.
    """
    # Python types are checked before the dispatcher, whose schema error would not
    # name the argument; the op itself (and its fake, under Dynamo) checks the rest.
    if not torch.compiler.is_compiling():
        check_cat_pad_5d_types(x, cache, padding, keep_cache_frames, channels_last)
    return torch.ops.wanops.cat_pad_5d(x, cache, list(padding), keep_cache_frames, channels_last)


def rms_norm_cat_pad_5d(
    x: torch.Tensor,
    gamma: torch.Tensor,
    scale: float,
    silu: bool,
    cache: torch.Tensor | None,
    padding: Sequence[int],
    keep_cache_frames: int = 0,
    channels_last: bool = False,
    bias: torch.Tensor | None = None,
    tf32_out: bool = False,
    norm_frames: int = 0,
    x_norm: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``cat_pad_5d(silu(WanRMS_norm(x + bias)), cache, padding, keep_cache_frames)`` in one pass, bit for bit.

    The norm is diffusers' bias-free, channel-first ``WanRMS_norm`` with ``gamma``
    (shape ``(C, 1, 1, 1)``) and ``scale``; SiLU follows when ``silu``. ``bias``
    (shape ``(C,)``, optional) is a conv's: x is then its raw output, and ``x + bias``
    is rounded as stock's conv rounds its bias add, but never written. ``cache``
    holds already-normalized frames. Both outputs are dense, in channels_last_3d when
    ``channels_last`` or when x and the cache are both channels-last, contiguous otherwise.
    With ``tf32_out`` the first output (the conv input) of an fp32 x is rounded to the nearest
    TF32 value, ties to even (16-bit values are on that grid already); the next cache is not.
    With ``norm_frames`` (a divisor of x's frame count) x is several causal chunks of that many frames,
    each normalized on its own, as stock normalizes one chunk at a time (0: one chunk).
    With ``x_norm`` ((B, 1, T, H, W) fp32) the op divides by that channel norm of ``x + bias`` instead of reducing
    it (e.g. ``bias_add_contiguous_norm``'s); it must be the one the op would reduce for stock's bits.
    """
    if not torch.compiler.is_compiling():
        check_rms_norm_cat_pad_5d_types(
            x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last, bias, tf32_out, norm_frames,
            x_norm,
        )
    return torch.ops.wanops.rms_norm_cat_pad_5d(
        x, gamma, scale, silu, cache, list(padding), keep_cache_frames, channels_last, bias, tf32_out, norm_frames,
        x_norm,
    )


def bias_add_contiguous(
    x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None = None,
    residual_bias: torch.Tensor | None = None, *, dup_factor_t: int = 1, dup_factor_s: int = 1,
    dup_repeats: int = 1, dup_drop_first: bool = False, frame_groups: int = 1,
) -> torch.Tensor:
    """``x + bias.view(1, C, 1, 1, 1)`` (ATen's rounding), written contiguous whatever x's layout.

    With ``residual`` (x's shape, any layout): ``(x + bias.view(1, C, 1, 1, 1)) + residual``,
    each add rounded as ATen rounds it, in the same one pass. With ``residual_bias`` (the
    residual is a conv's output without its bias): ``+ (residual + residual_bias.view(1, C, 1, 1, 1))``,
    that add rounded on its own too. With DupUp3D factors (not all 1) the residual is a DupUp3D
    source: ``+ DupUp3D(residual)`` as diffusers' ``DupUp3D(...)(residual, first_chunk=dup_drop_first)``
    with ``factor_t``, ``factor_s`` and ``repeats`` computes it, read in place. With ``frame_groups`` G > 1 (no
    residual): the sum's G channel groups interleaved along the frames, shape (B, C // G, G * T, H, W), as a Wan
    temporal upsampler stacks its time conv's output.
    """
    if not torch.compiler.is_compiling():
        check_bias_add_contiguous_types(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats,
                                        dup_drop_first)
        require_int(frame_groups, "frame_groups")
    return torch.ops.wanops.bias_add_contiguous(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s,
                                                dup_repeats, dup_drop_first, frame_groups)


def bias_add_contiguous_norm(
    x: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor | None = None,
    residual_bias: torch.Tensor | None = None, *, dup_factor_t: int = 1, dup_factor_s: int = 1,
    dup_repeats: int = 1, dup_drop_first: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    """``bias_add_contiguous`` (the same arguments) and its fp32 L2 norm over channels, in one pass.

    The norm, shape ``(B, 1, T, H, W)``, adds its squares in channel_norm_kernel's order with one block, ATen's
    CUDA order for the geometries ``rms_norm_cat_pad_5d`` accepts channel_norm_kernel for (unsplit): there it is
    the ``x_norm`` that ``rms_norm_cat_pad_5d`` would compute from the output itself.
    """
    if not torch.compiler.is_compiling():
        check_bias_add_contiguous_types(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s, dup_repeats,
                                        dup_drop_first)
    return torch.ops.wanops.bias_add_contiguous_norm(x, bias, residual, residual_bias, dup_factor_t, dup_factor_s,
                                                     dup_repeats, dup_drop_first)


def conv3d_chunked(
    x: torch.Tensor, weight: torch.Tensor, truncate_x: bool = False, tail_tiles: int = 0, tail_segments: int = 1
) -> torch.Tensor:
    """``F.conv3d(x, weight)`` (stride 1, no padding, no bias) summed in cuDNN's 32-channel-chunk order, channels_last_3d.

    Where cuDNN runs an implicit-GEMM kernel with a 32-channel K tile for this geometry, the
    same bits as ``F.conv3d``; elsewhere the same conv, rounded in its own order. With
    ``truncate_x`` an fp32 x is read with the 13 low significand bits TF32 drops cleared
    (as the tensor cores read fp32) rather than rounded: the same for x on the TF32 grid, faster.
    ``tail_tiles`` of the output's 128 x 128 tiles, the last ones, sum their K steps in
    ``tail_segments`` runs added last to first, as cuDNN's ``segment_k_on`` kernels sum some of
    their last tiles (the module's docstring).
    """
    if not torch.compiler.is_compiling():
        check_conv3d_chunked_types(x, weight, truncate_x, tail_tiles, tail_segments)
    return torch.ops.wanops.conv3d_chunked(x, weight, truncate_x, tail_tiles, tail_segments)


def channels_last_copy(x: torch.Tensor) -> torch.Tensor:
    """``x.contiguous(memory_format=channels_last(_3d))`` (4-D or 5-D x) into a fresh tensor, same values.

    A contiguous conv weight copied so for a channels-last conv input: cuDNN receives the
    tensor ATen would have made on every call, made faster.
    """
    if not torch.compiler.is_compiling():
        check_channels_last_copy_args(x)
    return torch.ops.wanops.channels_last_copy(x)


def dup_up3d_add(
    main: torch.Tensor,
    source: torch.Tensor,
    factor_t: int,
    factor_s: int,
    repeats: int,
    drop_first: bool,
) -> torch.Tensor:
    """``main + DupUp3D(source)`` bit for bit, without materialising the shortcut."""
    if not torch.compiler.is_compiling():
        check_dup_up3d_add_types(main, source, factor_t, factor_s, repeats, drop_first)
    return torch.ops.wanops.dup_up3d_add(main, source, factor_t, factor_s, repeats, drop_first)


def refresh_cache(cache: torch.Tensor, next_cache: torch.Tensor) -> None:
    """``cache.copy_(next_cache)`` in place (same shape, dtype, device and strides; no shared memory).

    A compiled graph writes a conv's next cache over its old one through this op, so that the old
    caches, which the caller's cache list holds until the graph returns, are not joined by a new set.
    """
    if not torch.compiler.is_compiling():
        check_refresh_cache_args(cache, next_cache)
    torch.ops.wanops.refresh_cache(cache, next_cache)


def upsample_nearest_2x(x: torch.Tensor, channels_last: bool = False) -> torch.Tensor:
    """A Wan upsampler's Conv2d input from its (B, C, T, H, W) frames, bit for bit, in one pass.

    Equals ``WanUpsample(scale_factor=(2.0, 2.0), mode="nearest-exact")`` of
    ``x.permute(0, 2, 1, 3, 4).reshape(B * T, C, H, W)`` (same bits; same strides, or
    channels_last with ``channels_last``): shape ``(B * T, C, 2H, 2W)``.
    """
    if not torch.compiler.is_compiling():
        check_upsample_nearest_2x_args(x, channels_last)
    return torch.ops.wanops.upsample_nearest_2x(x, channels_last)


def wan_rms_norm(
    x: torch.Tensor,
    gamma: torch.Tensor,
    scale: float,
    channel_first: bool = True,
    bias: torch.Tensor | None = None,
    silu: bool = False,
) -> torch.Tensor:
    """diffusers' ``WanRMS_norm`` of x (its ``gamma``, ``scale``, ``channel_first``, ``bias`` or the float 0.0
    for None), then SiLU when ``silu``: stock's own code, as one op that ``torch.compile`` does not decompose.

    The same bits, strides and gradients as the stock modules, eager or compiled.
    """
    if not torch.compiler.is_compiling():
        check_wan_rms_norm_args(x, gamma, scale, channel_first, bias, silu)
    return torch.ops.wanops.wan_rms_norm(x, gamma, scale, channel_first, bias, silu)


__all__ = [
    "bias_add_contiguous", "bias_add_contiguous_norm", "cat_pad_5d", "channels_last_copy", "conv3d_chunked",
    "dup_up3d_add", "refresh_cache", "rms_norm_cat_pad_5d", "upsample_nearest_2x", "wan_rms_norm",
]
