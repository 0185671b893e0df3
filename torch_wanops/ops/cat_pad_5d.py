"""``wanops::cat_pad_5d``: the padded input of a cached causal Conv3d, built in one pass.

Spec (the reference below): ``F.pad(torch.cat([cache, x], 2), padding)`` with the
front padding reduced by the cached frames, plus optionally the next chunk's cache:
the last ``keep_cache_frames`` frames of that output without the spatial border. Both
outputs in the reference expression's layout, or in channels_last_3d when asked for
(a conv input for cuDNN's channels-last kernels).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from torch_wanops import _backend
from torch_wanops.ops._common import (
    define_op,
    dense_strides,
    is_channels_last,
    reference_strides,
    require,
    require_int,
    require_same_placement,
    require_tensor,
)

_kernels = _backend.kernel_module("cat_pad_5d")


def check_cat_pad_5d_types(
    x: object, cache: object, padding: object, keep_cache_frames: object, channels_last: object = False
) -> None:
    """The Python-type half of the checks: cheap, and run before the dispatcher sees the call."""
    if not isinstance(channels_last, bool):
        raise TypeError(f"channels_last must be a bool, got {type(channels_last).__name__}")
    require_tensor(x, "x")
    require_tensor(cache, "cache", optional=True)
    if not isinstance(padding, (list, tuple)):
        raise TypeError(f"padding must be a list of 6 ints, got {type(padding).__name__}")
    for value in padding:
        require_int(value, "padding entries")
    require_int(keep_cache_frames, "keep_cache_frames")


def check_cat_pad_5d_args(
    x: torch.Tensor, cache: torch.Tensor | None, padding: Sequence[int], keep_cache_frames: int,
    channels_last: bool = False,
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_cat_pad_5d_types(x, cache, padding, keep_cache_frames, channels_last)
    check_cat_pad_5d_values(x, cache, padding, keep_cache_frames)


def check_cat_pad_5d_values(
    x: torch.Tensor, cache: torch.Tensor | None, padding: Sequence[int], keep_cache_frames: int
) -> None:
    """The half of ``check_cat_pad_5d_args`` after the types: for callers that checked those already."""
    if cache is not None:
        require_same_placement(x, "x", cache, "cache")
        for dim, label in ((0, "batch"), (1, "channels"), (3, "height"), (4, "width")):
            require(
                cache.shape[dim] == x.shape[dim],
                ValueError,
                lambda: f"cache must match x in {label} (dim {dim}): cache {tuple(cache.shape)} vs x {tuple(x.shape)}",
            )
    if len(padding) != 6:
        raise ValueError(f"padding must have 6 entries (w_left, w_right, h_top, h_bottom, t_front, t_back), got {len(padding)}")
    w_left, w_right, h_top, h_bottom, t_front, t_back = padding
    require(all(value >= 0 for value in padding), ValueError, lambda: f"padding must be non-negative, got {list(padding)}")
    require(w_left == w_right, ValueError, lambda: f"padding must be symmetric in width (w_left == w_right), got {list(padding)}")
    require(h_top == h_bottom, ValueError, lambda: f"padding must be symmetric in height (h_top == h_bottom), got {list(padding)}")
    require(t_back == 0, ValueError, lambda: f"padding must have no back (t_back) padding for a causal conv, got {t_back}")
    if cache is not None:
        require(
            cache.shape[2] <= t_front,
            ValueError,
            lambda: f"cache has {cache.shape[2]} frames, more than the front padding t_front={t_front} of padding",
        )
    require(keep_cache_frames >= 0, ValueError, lambda: f"keep_cache_frames must be >= 0, got {keep_cache_frames}")


def cat_pad_5d_reference(x: torch.Tensor, cache: torch.Tensor | None, padding: Sequence[int]) -> torch.Tensor:
    """What stock ``WanCausalConv3d.forward`` feeds its convolution (the first output's spec)."""
    padding = list(padding)
    if cache is not None:
        x = torch.cat([cache, x], dim=2)
        padding[4] -= cache.shape[2]
    return F.pad(x, padding)


def _keep_frames(out_frames: int, keep_cache_frames: int) -> int:
    return min(keep_cache_frames, out_frames)


def _empty_next_cache(out: torch.Tensor, x: torch.Tensor, frames: int) -> torch.Tensor:
    """The second output: ``frames`` frames of x's spatial size, in the first output's memory format."""
    memory_format = torch.channels_last_3d if is_channels_last(out) else torch.contiguous_format
    batch, channels, _, height, width = x.shape
    return torch.empty(
        (batch, channels, frames, height, width), dtype=out.dtype, device=out.device, memory_format=memory_format
    )


def padded_shape(x: torch.Tensor, padding: Sequence[int], upsample: int = 1) -> tuple:
    """The first output's shape: x (upsampled ``upsample`` times in space) with the front and spatial padding added."""
    pad_w, _, pad_h, _, t_front, _ = padding
    batch, channels, frames, height, width = x.shape
    return (batch, channels, t_front + frames, height * upsample + 2 * pad_h, width * upsample + 2 * pad_w)


def dense_out_strides(x: torch.Tensor, padding: Sequence[int], channels_last: bool) -> tuple[int, ...]:
    """Dense strides of the padded output's shape: channels_last_3d, or contiguous."""
    return dense_strides(padded_shape(x, padding), (1, 4, 3, 2, 0) if channels_last else (4, 3, 2, 1, 0))


def cat_pad_5d_out_strides(
    x: torch.Tensor, cache: torch.Tensor | None, padding: Sequence[int], channels_last: bool = False
) -> tuple[int, ...]:
    """The first output's strides: those of ``cat_pad_5d_reference``, or dense channels_last_3d ones."""
    if channels_last:
        return dense_out_strides(x, padding, True)
    return reference_strides(cat_pad_5d_reference, (x, cache), (tuple(padding),))


def cat_pad_5d_outputs_reference(x, cache, padding, keep_cache_frames, channels_last=False):
    """Both outputs from plain torch ops."""
    out = cat_pad_5d_reference(x, cache, padding)
    if channels_last:
        strides = cat_pad_5d_out_strides(x, cache, padding, True)
        out = torch.empty_strided(out.shape, strides, dtype=out.dtype, device=out.device).copy_(out)
    keep = _keep_frames(out.shape[2], keep_cache_frames)
    next_cache = _empty_next_cache(out, x, keep)
    if keep:
        pad_w, pad_h = padding[0], padding[2]
        next_cache.copy_(out[:, :, out.shape[2] - keep :, pad_h : pad_h + x.shape[3], pad_w : pad_w + x.shape[4]])
    return out, next_cache


@dataclass(frozen=True)
class NormPrologue:
    """WanRMS_norm (+ SiLU) applied to x's frames inside the kernel (``rms_norm_cat_pad_5d``)."""

    norm: torch.Tensor  # (B, 1, T, H, W) fp32 channel norm of x
    gamma: torch.Tensor
    scale: float
    silu: bool
    # With a 16-bit x: SiLU of every value of x's dtype, indexed by its bits (silu_table());
    # the kernel then looks SiLU up instead of computing it.
    silu_table: torch.Tensor | None = None
    # A conv's bias, added to x (rounded to its dtype) before the norm: x is the raw conv output.
    bias: torch.Tensor | None = None
    # fp32: the padded output (the conv input, not the next cache) rounded to the nearest TF32 value.
    tf32_out: bool = False


def launch_cat_pad_5d(
    x: torch.Tensor,
    cache: torch.Tensor | None,
    padding: Sequence[int],
    keep_cache_frames: int,
    out_strides: Sequence[int],
    prologue: NormPrologue | None = None,
    upsample: int = 1,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run the Triton kernel into a new dense output with ``out_strides``.

    ``upsample > 1`` reads x nearest-upsampled by that factor in height and width
    (without a cache, kept frames or a norm: upsample_nearest_2x's use).
    """
    if upsample != 1 and (cache is not None or keep_cache_frames or prologue is not None):
        raise ValueError("launch_cat_pad_5d upsamples x only without a cache, kept frames or a norm prologue")
    pad_w, _, pad_h, _, t_front, _ = padding
    _, channels, _, height, width = x.shape
    height, width = height * upsample, width * upsample
    cache_frames = 0 if cache is None else cache.shape[2]
    out_shape = padded_shape(x, padding, upsample)
    out = torch.empty_strided(out_shape, out_strides, dtype=x.dtype, device=x.device)
    keep = _keep_frames(out_shape[2], keep_cache_frames)
    next_cache = _empty_next_cache(out, x, keep)
    if out.numel() == 0:
        return out, next_cache
    channels_fastest = is_channels_last(out)
    transposing = channels_fastest and x.stride(4) == 1 and width > 1
    block_c, block_w, warps = _backend.line_tile(channels, out_shape[4], channels_fastest, prologue is not None, transposing)
    lines = out_shape[0] * out_shape[2] * out_shape[3]
    lines_per_program = _backend.lines_per_program(block_c * block_w, lines)
    # A transposing tile of an x whose rows start 16-element aligned (strides Triton marks divisible by 16)
    # loads vectors when its width tiles start on x's columns: one more width block per line, for the left padding.
    x_aligned = transposing and upsample == 1 and 0 < pad_w < block_w and all(s % 16 == 0 for s in x.stride()[:4])
    c_blocks = -(-channels // block_c)
    w_blocks = -(-(width + pad_w) // block_w) + 1 if x_aligned else -(-out_shape[4] // block_w)
    grid = _backend.line_tile_grid(-(-lines // lines_per_program), c_blocks, w_blocks)
    # Pointers a configuration never dereferences get a placeholder tensor.
    cache_arg = x if cache is None else cache
    keep_arg = out if keep == 0 else next_cache
    norm = x if prologue is None else prologue.norm
    silu_table = None if prologue is None else prologue.silu_table
    bias = None if prologue is None else prologue.bias
    if silu_table is not None:
        require(
            silu_table.shape == (1 << 16,) and silu_table.dtype == x.dtype and silu_table.device == x.device,
            ValueError,
            lambda: f"silu_table must have 65536 entries of x's dtype on x's device, got {tuple(silu_table.shape)} "
            f"{silu_table.dtype} on {silu_table.device} for x {x.dtype} on {x.device}",
        )
    norm_strides = (0, 0, 0, 0) if prologue is None else (norm.stride(0), *norm.stride()[2:])
    with _backend.device_of(x):
        _kernels.cat_pad_5d_kernel[grid](
            x, cache_arg, out, keep_arg, norm,
            x if prologue is None else prologue.gamma,
            x if silu_table is None else silu_table,
            x if bias is None else bias,
            0.0 if prologue is None else prologue.scale,
            channels, height, width, cache_frames,
            out_shape[2], out_shape[3], out_shape[4],
            t_front - cache_frames, pad_h, pad_w, keep, lines, c_blocks, w_blocks,
            *_backend.division_magic(out_shape[3]), *_backend.division_magic(out_shape[2]),
            *x.stride(), *cache_arg.stride(), *out.stride(), *keep_arg.stride(), *norm_strides,
            HAS_CACHE=cache is not None,
            HAS_KEEP=keep > 0,
            INDEX64=_backend.index_needs_int64(x, cache_arg, out, keep_arg),
            NORM=prologue is not None,
            SILU=prologue is not None and prologue.silu,
            SILU_TABLE=silu_table is not None,
            HAS_BIAS=bias is not None,
            TF32_OUT=prologue is not None and prologue.tf32_out and x.dtype == torch.float32,
            LIBDEVICE_EXP=not _backend.INTERPRETER,
            BLOCK_C=block_c,
            BLOCK_W=block_w,
            LINES=lines_per_program,
            UPSAMPLE=upsample,
            X_ALIGNED=x_aligned,
            # A transposing norm merges the cache before normalizing and reads gamma as a tile (one layout
            # conversion with Triton 3.6); a channels-last one merges it after, which measured faster (session 39).
            MERGE_FIRST=transposing,
            num_warps=warps,
            # Every multiply and add of the norm rounds on its own, as in ATen: no FMA.
            enable_fp_fusion=False,
        )
    return out, next_cache


# Defined with define_op (torch.library.define) and impl rather than @custom_op: same contract
# (schema, fake, autograd), a third of the per-call dispatch overhead.
define_op(
    "wanops::cat_pad_5d",
    "(Tensor x, Tensor? cache, SymInt[] padding, int keep_cache_frames=0, bool channels_last=False) "
    "-> (Tensor, Tensor)",
)


@torch.library.impl("wanops::cat_pad_5d", "default")
def _cat_pad_5d_impl(x, cache, padding, keep_cache_frames=0, channels_last=False):
    # One kernel for every device: Triton where _backend allows it (CUDA, or CPU
    # under TRITON_INTERPRET=1), the exact torch reference everywhere else.
    check_cat_pad_5d_args(x, cache, padding, keep_cache_frames, channels_last)
    if _backend.uses_kernel(x, _kernels):
        strides = cat_pad_5d_out_strides(x, cache, padding, channels_last)
        return launch_cat_pad_5d(x, cache, padding, keep_cache_frames, strides)
    return cat_pad_5d_outputs_reference(x, cache, padding, keep_cache_frames, channels_last)


@torch.library.register_fake("wanops::cat_pad_5d")
def _cat_pad_5d_fake(x, cache, padding, keep_cache_frames=0, channels_last=False):
    check_cat_pad_5d_args(x, cache, padding, keep_cache_frames, channels_last)
    # Running the reference on fake tensors gives the real op's shape and strides.
    out = cat_pad_5d_reference(x, cache, padding)
    if channels_last:
        strides = cat_pad_5d_out_strides(x, cache, padding, True)
        out = torch.empty_strided(out.shape, strides, dtype=out.dtype, device=out.device)
    return out, _empty_next_cache(out, x, _keep_frames(out.shape[2], keep_cache_frames))


def _cat_pad_5d_setup_context(ctx, inputs, output):
    x, cache, padding = inputs[:3]
    ctx.x_frames = x.shape[2]
    ctx.cache_frames = None if cache is None else cache.shape[2]
    ctx.spatial = (padding[2], x.shape[3], padding[0], x.shape[4])


def _cat_pad_5d_backward(ctx, grad_out, grad_next_cache):
    pad_h, height, pad_w, width = ctx.spatial
    grad = grad_out[:, :, :, pad_h : pad_h + height, pad_w : pad_w + width]
    if grad_next_cache is not None and grad_next_cache.shape[2] > 0:
        # The kept frames are copies of the last output frames: their grads add up.
        grad = grad.clone()
        grad[:, :, grad.shape[2] - grad_next_cache.shape[2] :] += grad_next_cache
    frames = grad.shape[2]
    grad_x = grad[:, :, frames - ctx.x_frames :]
    grad_cache = None
    if ctx.cache_frames is not None:
        grad_cache = grad[:, :, frames - ctx.x_frames - ctx.cache_frames : frames - ctx.x_frames]
    return grad_x, grad_cache, None, None, None


torch.library.register_autograd(
    "wanops::cat_pad_5d", _cat_pad_5d_backward, setup_context=_cat_pad_5d_setup_context
)
