"""``wanops::rms_norm_cat_pad_5d``: a residual block's norm, SiLU and causal-conv input in one pass.

Spec (the reference below): ``cat_pad_5d(act(norm(x)), cache, padding, keep)``
where ``norm`` is diffusers' bias-free ``WanRMS_norm`` (channel-first, fp32
normalize for fp16/bf16) with ``gamma`` and ``scale``, and ``act`` is SiLU when
``silu``. The cache holds frames that were already normalized. The Triton path
computes the fp32 channel norm with ATen (so its summation order is ATen's) and
does everything else in the cat_pad_5d kernel.

Layout: both outputs are dense, in channels_last_3d when ``channels_last`` or when
x and the cache are both channels-last, contiguous otherwise. That is what the
stock expression gives for canonically laid-out contiguous or channels-last inputs.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from torch_wanops import _backend
from torch_wanops.ops._common import (
    dense_strides,
    is_channels_last,
    is_frame_major,
    require,
    require_same_placement,
    require_tensor,
)
from torch_wanops.ops.cat_pad_5d import (
    NormPrologue,
    _empty_next_cache,
    _keep_frames,
    cat_pad_5d_outputs_reference,
    check_cat_pad_5d_args,
    check_cat_pad_5d_types,
    launch_cat_pad_5d,
    padded_shape,
)

_kernels = _backend.kernel_module("cat_pad_5d")
# SiLU's exp under the interpreter is numpy's: CPU keeps the reference (see _backend).
INTERPRETABLE = False


def check_rms_norm_cat_pad_5d_types(
    x: object, gamma: object, scale: object, silu: object, cache: object, padding: object,
    keep_cache_frames: object, channels_last: object,
) -> None:
    """The Python-type half of the checks, run before the dispatcher sees the call."""
    check_cat_pad_5d_types(x, cache, padding, keep_cache_frames)
    require_tensor(gamma, "gamma", ndim=4)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"scale must be a float, got {type(scale).__name__}")
    for value, name in ((silu, "silu"), (channels_last, "channels_last")):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")


def check_rms_norm_cat_pad_5d_args(
    x: torch.Tensor, gamma: torch.Tensor, scale: float, silu: bool, cache: torch.Tensor | None,
    padding: Sequence[int], keep_cache_frames: int, channels_last: bool,
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_rms_norm_cat_pad_5d_types(x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last)
    check_cat_pad_5d_args(x, cache, padding, keep_cache_frames)
    require_same_placement(x, "x", gamma, "gamma")
    require(
        tuple(gamma.shape) == (x.shape[1], 1, 1, 1),
        ValueError,
        lambda: f"gamma must have shape (C, 1, 1, 1) = ({x.shape[1]}, 1, 1, 1) for x {tuple(x.shape)}, "
        f"got {tuple(gamma.shape)}",
    )


def rms_norm_silu_reference(x: torch.Tensor, gamma: torch.Tensor, scale: float, silu: bool) -> torch.Tensor:
    """Stock ``WanRMS_norm(channel_first=True, bias=False)`` followed by ``nn.SiLU`` when ``silu``."""
    needs_fp32 = x.dtype in (torch.float16, torch.bfloat16) or any(t in str(x.dtype) for t in ("float4_", "float8_"))
    y = F.normalize(x.float() if needs_fp32 else x, dim=1).to(x.dtype) * scale * gamma + 0.0
    return F.silu(y) if silu else y


def _out_memory_format(x: torch.Tensor, cache: torch.Tensor | None, channels_last: bool) -> torch.memory_format:
    """channels_last_3d when asked for, or when x and the cache are both channels-last (as torch.cat decides)."""
    if channels_last or (is_channels_last(x) and (cache is None or is_channels_last(cache))):
        return torch.channels_last_3d
    return torch.contiguous_format


def _out_strides(x, cache, padding, channels_last) -> tuple[int, ...]:
    order = (1, 4, 3, 2, 0) if _out_memory_format(x, cache, channels_last) == torch.channels_last_3d else (4, 3, 2, 1, 0)
    return dense_strides(padded_shape(x, padding), order)


def _stock_outputs(x, gamma, scale, silu, cache, padding, keep_cache_frames):
    return cat_pad_5d_outputs_reference(rms_norm_silu_reference(x, gamma, scale, silu), cache, padding, keep_cache_frames)


def rms_norm_cat_pad_5d_reference(x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last):
    """The op's outputs from the stock ops, in the op's layout."""
    out, next_cache = _stock_outputs(x, gamma, scale, silu, cache, padding, keep_cache_frames)
    strides = _out_strides(x, cache, padding, channels_last)
    if out.stride() != strides:
        out = torch.empty_strided(out.shape, strides, dtype=out.dtype, device=out.device).copy_(out)
        next_cache = _empty_next_cache(out, x, next_cache.shape[2]).copy_(next_cache)
    return out, next_cache


_silu_tables: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}
# Look SiLU up in silu_table() on CUDA (bf16/fp16) instead of computing it: exact by
# construction and ~20% off the fused norm kernel on the H200 (benchmarks/results/levers.md).
SILU_BY_TABLE = True


def silu_table(device: torch.device | str, dtype: torch.dtype) -> torch.Tensor:
    """``F.silu`` of every value of a 16-bit ``dtype``, indexed by the value's bits (cached per device).

    On CUDA each entry is ATen's own SiLU of that value, so a kernel looking it up is
    exact by construction. (ATen's CPU SiLU may round an element differently in its
    vectorized body and its scalar tail, so on CPU the table is only ATen's vectorized result.)
    """
    require(dtype in (torch.bfloat16, torch.float16), ValueError, lambda: f"dtype must be bf16 or fp16, got {dtype}")
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    key = (device, dtype)
    if key not in _silu_tables:
        index = torch.arange(1 << 16, dtype=torch.int32, device=device)
        bits = torch.where(index < 1 << 15, index, index - (1 << 16)).to(torch.int16)  # entry i: bit pattern i
        table = F.silu(bits.view(dtype))
        if table.is_cuda:
            # Once per device and dtype: a call on another stream must find the table complete.
            torch.cuda.current_stream(device).synchronize()
        _silu_tables[key] = table
    return _silu_tables[key]


def _cuda_silu_table(x: torch.Tensor, silu: bool) -> torch.Tensor | None:
    """The SiLU table for this call, or None to compute SiLU in the kernel."""
    if not (SILU_BY_TABLE and silu and x.is_cuda and x.dtype in (torch.bfloat16, torch.float16)):
        return None
    if (x.device, x.dtype) not in _silu_tables and torch.cuda.is_current_stream_capturing():
        return None  # building the table inside a CUDA graph capture would tie it to the graph's memory
    return silu_table(x.device, x.dtype)


def _upcast_in_reduction_exact(x: torch.Tensor) -> bool:
    """Layouts where reducing x with ``dtype=float32`` was measured bit-identical to reducing
    ``x.float()`` on the H200 (``benchmarks/probe_exactness.py``, the decoder's sizes): 16-bit x
    on CUDA, contiguous or frame-major ((B, T, C, H, W) in memory, as the upsamplers leave it)."""
    if x.dtype == torch.float32 or not x.is_cuda:
        return False
    return x.is_contiguous() or is_frame_major(x)


def _channel_norm(x: torch.Tensor) -> torch.Tensor:
    """``F.normalize``'s fp32 channel norm of x, bit for bit, as a (B, 1, T, H, W) tensor."""
    if _upcast_in_reduction_exact(x):
        # The bits of reducing x.float() without writing and reading the fp32 copy.
        return torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32)
    return torch.linalg.vector_norm(x.float(), dim=1, keepdim=True)


torch.library.define(
    "wanops::rms_norm_cat_pad_5d",
    "(Tensor x, Tensor gamma, float scale, bool silu, Tensor? cache, SymInt[] padding, int keep_cache_frames=0, "
    "bool channels_last=False) -> (Tensor, Tensor)",
)


@torch.library.impl("wanops::rms_norm_cat_pad_5d", "default")
def _rms_norm_cat_pad_5d_impl(x, gamma, scale, silu, cache, padding, keep_cache_frames=0, channels_last=False):
    check_rms_norm_cat_pad_5d_args(x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last)
    if _backend.uses_kernel(x, _kernels, interpretable=INTERPRETABLE):
        prologue = NormPrologue(_channel_norm(x), gamma, float(scale), silu, _cuda_silu_table(x, silu))
        strides = _out_strides(x, cache, padding, channels_last)
        return launch_cat_pad_5d(x, cache, padding, keep_cache_frames, strides, prologue)
    return rms_norm_cat_pad_5d_reference(x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last)


@torch.library.register_fake("wanops::rms_norm_cat_pad_5d")
def _rms_norm_cat_pad_5d_fake(x, gamma, scale, silu, cache, padding, keep_cache_frames=0, channels_last=False):
    check_rms_norm_cat_pad_5d_args(x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last)
    memory_format = _out_memory_format(x, cache, channels_last)
    out = torch.empty(padded_shape(x, padding), dtype=x.dtype, device=x.device, memory_format=memory_format)
    return out, _empty_next_cache(out, x, _keep_frames(out.shape[2], keep_cache_frames))


def _setup_context(ctx, inputs, output):
    x, gamma, scale, silu, cache, padding, keep_cache_frames, _ = inputs
    ctx.arguments = (scale, silu, list(padding), keep_cache_frames)
    ctx.has_cache = cache is not None
    ctx.save_for_backward(x, gamma, cache if cache is not None else x)


def _backward(ctx, grad_out, grad_next_cache):
    # The norm's gradient is ATen's: recompute the reference under autograd and ask it.
    x, gamma, cache = ctx.saved_tensors
    scale, silu, padding, keep_cache_frames = ctx.arguments
    inputs = [x.detach().requires_grad_(), gamma.detach().requires_grad_()]
    if ctx.has_cache:
        inputs.append(cache.detach().requires_grad_())
    with torch.enable_grad():
        # Layout does not change gradient values: the plain stock expression will do.
        outputs = _stock_outputs(
            inputs[0], inputs[1], scale, silu, inputs[2] if ctx.has_cache else None, padding, keep_cache_frames
        )
        pairs = [(o, g) for o, g in zip(outputs, (grad_out, grad_next_cache)) if g is not None and o.numel()]
        grads = torch.autograd.grad(
            [o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True
        )
    grad_cache = grads[2] if ctx.has_cache else None
    return grads[0], grads[1], None, None, grad_cache, None, None, None


torch.library.register_autograd("wanops::rms_norm_cat_pad_5d", _backward, setup_context=_setup_context)
