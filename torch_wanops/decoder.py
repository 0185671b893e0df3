"""OmniWanDecoder: diffusers' Wan VAE decoder, run through the wanops ops.

The subclass keeps ``WanDecoder3d``'s constructor, submodules and state_dict keys,
and its ``forward`` keeps the stock cache protocol (the per-conv cache list,
``feat_idx``, the ``"Rep"`` marker of the temporal upsampler, ``first_chunk``), so
``AutoencoderKLWan._decode``, ``tiled_decode`` and slicing drive it unchanged. It
walks the module tree itself: every padded causal conv gets its input and its next
cache from ``cat_pad_5d`` in one pass, or, where a norm and SiLU precede it (residual
blocks, the head), from ``rms_norm_cat_pad_5d``, which applies them on the way; every
Wan2.2 residual up block adds its DupUp3D shortcut in its upsampler conv's bias pass
(``bias_add_contiguous``, FUSED_DUP_UP3D_ADDS) or with ``dup_up3d_add``; every
upsampler's Conv2d input comes from ``upsample_nearest_2x`` (FUSED_UPSAMPLE), and
the mid block's attention normalizes with ``rms_norm_cat_pad_5d`` (no padding).
Norms in layouts the fused op does not mirror run stock's code as one op
(``wan_rms_norm``, which a compiled graph does not decompose); the attention's convs
and SDPA and the upsamplers' other layers are the stock child modules, called as they are. A
child of a type the walk does not know, one carrying hooks, or one whose class's code is not the
code the walk mirrors (diffusers_code: a diffusers release or patch that changed it) runs its own
``forward``.
"""

from __future__ import annotations

import collections
import contextlib
import contextvars
import enum
import functools
import logging
import math
import re
import threading
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any, NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from diffusers.models.autoencoders.autoencoder_kl_wan import (
    CACHE_T,
    AutoencoderKLWan,
    DupUp3D,
    WanAttentionBlock,
    WanCausalConv3d,
    WanDecoder3d,
    WanMidBlock,
    WanResample,
    WanResidualBlock,
    WanResidualUpBlock,
    WanRMS_norm,
    WanUpBlock,
    WanUpsample,
    unpatchify,
)
from diffusers.models.autoencoders.vae import DecoderOutput

from torch_wanops import _backend
from torch_wanops.diffusers_code import runs_recorded_code
from torch_wanops.ops import (
    bias_add_contiguous,
    bias_add_contiguous_norm,
    cat_pad_5d,
    channels_last_copy,
    conv3d_chunked,
    dup_up3d_add,
    refresh_cache,
    rms_norm_cat_pad_5d,
    upsample_nearest_2x,
    wan_rms_norm,
)
from torch_wanops.ops.bias_add_contiguous import interleave_frame_groups
from torch_wanops.ops.cat_pad_5d import padded_shape
from torch_wanops.ops.conv3d_chunked import TAIL_TILE, k_steps
from torch_wanops.ops.conv3d_chunked import takes_kernel as takes_chunked_kernel
from torch_wanops.ops.dup_up3d_add import expected_main_shape
from torch_wanops.ops.rms_norm_cat_pad_5d import (
    NORM_IS_INSTALLED_DIFFUSERS,
    chunk_ctas,
    frame_chunks,
    kernel_norm_is_atens,
    per_frame_chunk,
)
from torch_wanops.ops.wan_rms_norm import wan_norm_shape
from torch_wanops.ops._common import (
    aten_suggests_channels_last,
    channels_last_format,
    dense_strides,
    is_channels_last,
    is_frame_major,
)

logger = logging.getLogger(__name__)

FeatCache = list[Any] | None
REP_MARKER = "Rep"


def _stock_cached_conv(conv: nn.Module, x: torch.Tensor, feat_cache: list, feat_idx: list[int]) -> torch.Tensor:
    """The stock protocol for a conv the ops cannot stand in for (a foreign subclass, say)."""
    idx = feat_idx[0]
    cached = feat_cache[idx]
    next_cache = x[:, :, -CACHE_T:, :, :].clone()
    if next_cache.shape[2] < 2 and isinstance(cached, torch.Tensor):
        next_cache = torch.cat([cached[:, :, -1, :, :].unsqueeze(2).to(next_cache.device), next_cache], dim=2)
    elif next_cache.shape[2] < 2 and cached == REP_MARKER:
        next_cache = torch.cat([torch.zeros_like(next_cache), next_cache], dim=2)
    out = conv(x, cached) if isinstance(cached, torch.Tensor) else conv(x)
    feat_cache[idx] = next_cache
    feat_idx[0] += 1
    return out


def walkable(module: nn.Module, expected: type) -> bool:
    """Whether the walk may stand in for ``module``'s forward.

    Only a module of exactly the expected stock type, with no hooks, whose class runs the
    code the walk mirrors (diffusers_code: not a diffusers release or patch that changed
    it): diffusers' and accelerate's hooks (layerwise casting, group or sequential
    offload) replace the instance's ``forward`` or register forward hooks, and must keep
    running, so such a module is called as it is.
    """
    return (
        type(module) is expected
        and "forward" not in module.__dict__
        and not module._forward_hooks
        and not module._forward_pre_hooks
        and runs_recorded_code(expected)
    )


def _fusable_conv(conv: nn.Module) -> bool:
    # The fused cache is the last CACHE_T frames of [front zeros, cache, x]; it equals
    # the stock cache (up to leading zero frames that the next chunk's padding would
    # supply anyway) only when the conv pads at least CACHE_T frames in front.
    return walkable(conv, WanCausalConv3d) and conv._padding[4] >= CACHE_T


def _padded_conv_input(build: Callable, feat_cache: FeatCache, feat_idx: list[int]) -> torch.Tensor:
    """Run ``build(cache, keep_cache_frames) -> (padded, next_cache)`` on this conv's cache slot, if any."""
    if feat_cache is None:
        padded, _ = build(None, 0)
        return padded
    idx = feat_idx[0]
    cached = feat_cache[idx]
    # "Rep" (temporal upsampler after the first chunk) means "no cached frames".
    cached = cached if isinstance(cached, torch.Tensor) else None
    padded, next_cache = build(cached, CACHE_T)
    if _refreshes_in_place(cached, next_cache, feat_cache, idx):
        refresh_cache(cached, next_cache)
    else:
        feat_cache[idx] = next_cache
    feat_idx[0] += 1
    return padded


def _refreshes_in_place(cached: torch.Tensor | None, next_cache: torch.Tensor, feat_cache: list, idx: int) -> bool:
    """Whether a compiled graph writes this conv's next cache over the old one (refresh_cache).

    A graph returns new caches only when it ends, and the caller's list holds the old ones until
    then: writing over them keeps one set alive instead of two. Eager calls replace the slot, as
    stock does (the old cache dies there). Only an old cache of the new one's layout, in no other
    slot (the graph inputs of one tensor in two slots would both change), and without autograd.
    """
    return (
        torch.compiler.is_compiling()
        and not torch.is_grad_enabled()
        and cached is not None
        and cached.shape == next_cache.shape
        and cached.stride() == next_cache.stride()
        and cached.dtype == next_cache.dtype
        and cached.device == next_cache.device
        and not any(entry is cached for slot, entry in enumerate(feat_cache) if slot != idx)
    )


def causal_conv(
    conv: nn.Module, x: torch.Tensor, feat_cache: FeatCache, feat_idx: list[int], channels_last_convs: bool = False,
    frame_groups: int = 1,
) -> torch.Tensor:
    """A causal conv step without a norm in front (conv_in, a time conv), reading and refreshing its cache slot when
    there is a cache. With ``channels_last_convs`` and CHANNELS_LAST_UNNORMED_CONVS, eagerly and for a contiguous
    x, through the conv-layout lever (checked per geometry like the other convs); its output is stock's, contiguous,
    either way. With ``frame_groups`` the output's channel groups come interleaved along the frames
    (``interleave_frame_groups``, as a temporal upsampler stacks its time conv's output), by the lever's bias
    epilogue where INTERLEAVED_TIME_CONV_OUTPUTS lets it."""
    if not _fusable_conv(conv):
        if feat_cache is None:
            return interleave_frame_groups(conv(x), frame_groups)
        return interleave_frame_groups(_stock_cached_conv(conv, x, feat_cache, feat_idx), frame_groups)
    lever = (
        CHANNELS_LAST_UNNORMED_CONVS and not torch.compiler.is_compiling()
        and _lever_conv(conv, x, channels_last_convs) and _dense_layout(x) == torch.contiguous_format
    )
    # A geometry the check refused gets its input (and cache) in stock's layout straight away.
    channels_last = lever and not _refused_geometry(conv, padded_shape(x, conv._padding), x)
    conv_input = [_padded_conv_input(
        lambda cached, keep, x=x: cat_pad_5d(x, cached, conv._padding, keep, channels_last), feat_cache, feat_idx
    )]
    del x
    if channels_last:
        if INTERLEAVED_TIME_CONV_OUTPUTS:
            return _channels_last_conv(conv, conv_input.pop, frame_groups=frame_groups)
        return interleave_frame_groups(_channels_last_conv(conv, conv_input.pop), frame_groups)
    # The cache of a geometry refused on its first call is channels-last; stock's input of a contiguous x is contiguous.
    padded = conv_input.pop()
    return interleave_frame_groups(nn.Conv3d.forward(conv, padded.contiguous() if lever else padded), frame_groups)


def _fusable_norm(norm: nn.Module, x: torch.Tensor, images: bool = False) -> bool:
    # rms_norm_cat_pad_5d implements the bias-free channel-first norm (bias is the float 0.0),
    # of video (gamma (C, 1, 1, 1)) or, with images, of frames (gamma (C, 1, 1)), as the installed
    # diffusers computes it in x's dtype (diffusers >= 0.38 for fp16 and bf16).
    return (
        NORM_IS_INSTALLED_DIFFUSERS.get(x.dtype, False)
        and walkable(norm, WanRMS_norm)
        and norm.channel_first
        and isinstance(norm.bias, float)
        and norm.bias == 0.0
        and norm.gamma.dtype == x.dtype
        and norm.gamma.device == x.device
        and tuple(norm.gamma.shape) == (x.shape[1], 1, 1) + (() if images else (1,))
    )


def _is_identity_dropout(dropout: nn.Module | None) -> bool:
    return dropout is None or (walkable(dropout, nn.Dropout) and (not dropout.training or dropout.p == 0))


def _dense_layout(tensor: torch.Tensor) -> torch.memory_format | None:
    """The memory format ``tensor`` has exactly (canonical strides), or None.

    Exact strides matter: a channels-last tensor with one frame may carry any
    frame stride, and then torch treats it as contiguous while channel-stride
    rules would not.
    """
    if tensor.is_contiguous() and not is_channels_last(tensor):
        return torch.contiguous_format
    canonical = dense_strides(tensor.shape, (1, 4, 3, 2, 0))  # channels_last_3d
    if tensor.stride() == canonical and is_channels_last(tensor) and not tensor.is_contiguous():
        return torch.channels_last_3d
    return None


# fp32 convs through the conv-layout lever too. With TF32 (cuDNN's fp32 default), values alone
# cannot show that cuDNN's channels-last and stock-layout algorithms agree: in the tiny test
# configs a geometry that passed a check on random values gave stock's bits for some chunks and
# not for others (H200, session 9). The kernels separate them (session 10,
# diag_fp32_channels_last.py --per-call): every such geometry ran a different conv kernel in each
# layout (stock's wrote NCDHW output itself), every exact one the same kernel on the same NDHWC
# data, stock's transposes apart. So the per-geometry check also requires the same conv kernels
# (``_conv_kernels``), which makes the lever exact by construction wherever it is taken.
FP32_CHANNELS_LAST_CONVS = True

# fp16 through the same lever, exact by the same kernel check wherever it is taken. Measured on
# the H200 (session 11, side by side, fp16 480x832x81): whole decodes torch.equal to stock, every
# real-size Conv3d geometry passing the check; Wan2.1 1.268 -> 1.032 s, peak 3.81 -> 3.10 GiB;
# Wan2.2 1.376 -> 1.180 s, 3.82 -> 3.05 GiB.
FP16_CHANNELS_LAST_CONVS = True


def _channels_last_convs_supported(x: torch.Tensor) -> bool:
    # bf16, fp32 and fp16: on the H200 cuDNN computes these convs in NDHWC either way (stock's
    # profile shows its NCDHW input transposed to NDHWC), and the full decodes measured
    # bit-identical (tests/test_decoder.py, benchmarks/bench_decode.py); the per-geometry
    # check keeps the lever only where the same conv kernels run.
    if not x.is_cuda:
        return False
    return (
        x.dtype == torch.bfloat16
        or (FP32_CHANNELS_LAST_CONVS and x.dtype == torch.float32)
        or (FP16_CHANNELS_LAST_CONVS and x.dtype == torch.float16)
    )


# The first residual block after each upsampler gets the resample's output as stock's
# permute leaves it: frame-major, (B, T, C, H, W) in memory. With this on, its first norm
# takes the fused norm and the channels-last conv like every contiguous input, instead of
# the stock modules' chain of fp32 passes over the largest activations of the decoder.
# Exact by construction (the channel norm is ATen's reduction of the same x.float() stock
# reduces; the kernel reads x through its strides; the conv is checked per geometry), and
# measured on the H200: whole decodes torch.equal to stock, Wan2.1 bf16 480x832 1.177 -> 1.113 s.
FRAME_MAJOR_NORM_INPUTS = True


# The same inputs where the conv keeps stock's layout (CPU, refused geometries, the lever off):
# stock's torch.cat and F.pad make its conv input contiguous (a frame-major tensor suggests
# the contiguous format), which is what rms_norm_cat_pad_5d writes for a frame-major x, so the
# fused norm can take them too. Exact by that construction, and measured on the H200 (session 9,
# side by side, fp32 480x832): whole decodes torch.equal to stock; Wan2.1 2.298 -> 2.253 s and
# peak 8.19 -> 7.62 GiB, Wan2.2 2.386 -> 2.332 s and 8.40 -> 7.64 GiB (the stock norm chain's
# fp32 SiLU output of the largest activation was alive at the peak).
FRAME_MAJOR_NORMS_STOCK_LAYOUT = True


def _channels_last_conv_input_ok(x: torch.Tensor) -> bool:
    """x in a layout the conv-layout lever takes: contiguous, or frame-major (FRAME_MAJOR_NORM_INPUTS)."""
    if _dense_layout(x) == torch.contiguous_format:
        return True
    return FRAME_MAJOR_NORM_INPUTS and is_frame_major(x)


def _lever_conv(conv: nn.Module, x: torch.Tensor, channels_last_convs: bool) -> bool:
    """Whether ``conv`` may run as the conv-layout lever on x's dtype and device, x's layout aside."""
    return (
        channels_last_convs
        and _channels_last_convs_supported(x)
        and getattr(conv, "bias", None) is not None
        and conv.weight.is_contiguous()  # channels-last weights: see decode_chunk
    )


def _takes_conv_layout_lever(conv: nn.Module, x: torch.Tensor, channels_last_convs: bool) -> bool:
    """Whether ``conv``, fed from ``x``, runs as the conv-layout lever (channels-last input, bias epilogue)."""
    return _lever_conv(conv, x, channels_last_convs) and _channels_last_conv_input_ok(x)


# The causal convs fed without a norm in front, of a contiguous x, through the conv-layout lever too (the temporal
# upsamplers' time convs; conv_in's x, a frame slice of the latents in the frame loop, keeps stock's layout):
# cat_pad_5d writes their input channels-last and bias_add_contiguous adds the bias while transposing the output
# back, where stock's layout costs cuDNN's transposes of the input, the weight and the output and ATen's bias
# ``add_`` (most of 0.0055 s and 0.0016 s of a Wan2.2 bf16 480x832 decode, gpu-logs/session34/C). Checked per
# geometry like every lever conv. Eager only: compiled graphs keep their caches in stock's layout.
CHANNELS_LAST_UNNORMED_CONVS = True


# A residual block's ``x + shortcut`` done in the lever's bias epilogue (bias_add_contiguous
# with a residual): stock's two roundings in one pass instead of an extra read-read-write
# pass. Measured on the H200 (session 7, side by side, bf16 480x832): whole decodes
# torch.equal to stock; eager Wan2.1 1.120 -> 1.107 s, Wan2.2 1.216 -> 1.210 s; compiled
# Wan2.1 1.094 -> 1.050 s, Wan2.2 1.153 -> 1.134 s.
FUSED_RESIDUAL_ADDS = True

# A residual block's 1x1x1 shortcut conv run without its bias where conv2 takes the
# conv-layout lever: the fused residual add then adds that bias too (bias_add_contiguous's
# ``residual_bias``), rounded on its own as stock's in-place ``add_`` after cuDNN's conv
# rounds it (ATen adds a cuDNN conv's bias outside the conv). One read and one write of the
# shortcut less, and ATen's broadcasting add_ (~1.3 TB/s on the H200) no more. Measured on the
# H200 (session 27, bf16 480x832, on and off interleaved): whole decodes torch.equal to stock;
# Wan2.2 1.0445 -> 1.0362 s (ATen elementwise kernels 0.0196 -> 0.0100 s), Wan2.1 0.8187 -> 0.8148 s.
FUSED_SHORTCUT_BIASES = True
# Whether this torch build has cuDNN at all (without it a CUDA conv may fold its bias in).
_CUDNN_BUILT = torch.backends.cudnn.is_available()


# The upsamplers' 2x nearest upsampling (stock: a frame-major copy, a cast to fp32, the
# upsample, the cast back) as one upsample_nearest_2x pass, written channels_last for the
# conv-layout lever's Conv2d (its bias then added while transposing back) or in stock's
# layout otherwise. Exact by construction (each value copied; the Conv2d checked per
# geometry like the Conv3ds). Measured on the H200 (session 7, side by side, bf16 480x832,
# eager): whole decodes torch.equal to stock; Wan2.1 1.120 -> 1.094 s and peak 3.81 -> 3.24
# GiB (stock's fp32 upsample was the peak), Wan2.2 1.216 -> 1.191 s, 3.33 -> 3.05 GiB.
FUSED_UPSAMPLE = True


# With the conv-layout lever, an upsampler's Conv2d output ((B * T, C, H, W), channels-last)
# is already the channels_last_3d (B, C, T, H, W) tensor the resample hands on: its bias
# epilogue can transpose it back contiguous instead of into the frame-major layout stock's
# view and permute leave. The values are the same; the 1x1x1 shortcut convs that follow then
# need no contiguous copy (cuDNN gets the same contiguous input), and the norms reduce a
# contiguous x. It rests on ATen's channel norm giving the same bits for contiguous and
# frame-major x: so it does at every decoder size on the H200 (benchmarks/probe_exactness.py,
# session 9). Measured there side by side (bf16 480x832): whole decodes torch.equal to stock;
# Wan2.1 1.018 -> 1.012 s, Wan2.2 1.114 -> 1.102 s.
CONTIGUOUS_UPSAMPLER_OUTPUTS = True

# A Wan2.2 residual up block's DupUp3D shortcut added in its upsampler's Conv2d bias epilogue
# (bias_add_contiguous with DupUp3D factors): stock's bias add_ and its ``x + avg_shortcut(...)``,
# each rounded once, in one pass instead of two (the biased conv output no longer written and
# read back). Taken where that epilogue writes the 5-D output (CONTIGUOUS_UPSAMPLER_OUTPUTS).
FUSED_DUP_UP3D_ADDS = True


# A residual block's conv1 output goes to its second norm raw: the conv-layout lever's
# channels-last output without the bias epilogue, the bias added inside the fused norm
# (rms_norm_cat_pad_5d's ``bias``, rounded as stock's add_ rounds it), whose channel norm
# then comes from a kernel adding in ATen's CUDA order, where the op's per-geometry check
# finds it giving ATen's bits (benchmarks/probe_reduction_order.py: every H200 decoder
# shape under 1024 channels). One transposing pass over conv1's output less, and that norm
# reads and writes channels-last.
RAW_CONV_OUTPUT_NORMS = True


# A residual block's conv2 epilogue (its bias and shortcut, FUSED_RESIDUAL_ADDS) writes the channel norm of its
# output too (bias_add_contiguous_norm), where channel_norm_kernel's unsplit order is ATen's for that output's
# geometry (kernel_norm_is_atens, ATen not splitting the columns): the next norm (the next block's first, or the
# head's) divides by it instead of ATen reducing the output again. Exact by construction: the same sums in ATen's
# order, checked per geometry. On the H200 (gpu-logs/session42/B, bf16) the epilogue with its norm took less than
# the plain epilogue and ATen's norm together (256 channels at 4x240x416: 0.18 ms against 0.16 + 0.064 ms); decodes
# interleaved with stock (session42/F): Wan2.2 -0.001 s, Wan2.1 -0.006 s. Eager, in decode_latents' frame loop
# (epilogue_norms_kept), for blocks run one chunk at a time (no norm_frames).
EPILOGUE_NORMS = True
# With EPILOGUE_NORMS, Wan2.2's upsampler Conv2d epilogues that add their up block's DupUp3D shortcut
# (FUSED_DUP_UP3D_ADDS) write the norm too, for the next up block's first norm: the 512-channel one at 240x416 (the
# 1024-channel one's norm ATen splits). On the H200 (gpu-logs/session43/D, bf16, 2 frames) 0.159 ms against 0.152 ms
# for the plain epilogue and 0.068 ms for ATen's norm of its output.
DUP_UP3D_EPILOGUE_NORMS = True

# A temporal upsampler's time conv on the conv-layout lever (CHANNELS_LAST_UNNORMED_CONVS) has its bias epilogue
# write the output with its two channel halves already interleaved along the frames (bias_add_contiguous's
# frame_groups), where stock reshapes it and torch.stack copies it: the same tensor, one pass over it less.
INTERLEAVED_TIME_CONV_OUTPUTS = True


class EpilogueNorms:
    """The channel norms conv2 epilogues wrote during one decode, by output tensor, each handed out once.

    A norm is handed out only for the tensor it was written with, unchanged since (its version counter: an
    inference tensor has none, and the decoder's walk writes no block output in place); held through a weak
    reference, so that an output nobody normalizes (an up block's last, the upsampler's input) does not stay
    alive for it: its entry goes when the next one comes.
    """

    def __init__(self) -> None:
        self.norms: dict[int, tuple[weakref.ref, int | None, torch.Tensor]] = {}

    def remember(self, x: torch.Tensor, norm: torch.Tensor) -> None:
        self.norms = {key: entry for key, entry in self.norms.items() if entry[0]() is not None}
        self.norms[id(x)] = (weakref.ref(x), version_counter(x), norm)

    def take(self, x: torch.Tensor) -> torch.Tensor | None:
        """x's remembered norm, or None."""
        entry = self.norms.pop(id(x), None)
        if entry is None or entry[0]() is not x or entry[1] != version_counter(x):
            return None
        return entry[2]


_epilogue_norms: contextvars.ContextVar[EpilogueNorms | None] = contextvars.ContextVar(
    "torch_wanops_epilogue_norms", default=None
)


@contextlib.contextmanager
def epilogue_norms_kept() -> Iterator[None]:
    """Within the block, conv2 epilogues hand their outputs' channel norms to the next norm (EPILOGUE_NORMS)."""
    token = _epilogue_norms.set(EpilogueNorms() if EPILOGUE_NORMS else None)
    try:
        yield
    finally:
        _epilogue_norms.reset(token)


def _decode_epilogue_norms() -> EpilogueNorms | None:
    """This decode's EpilogueNorms (epilogue_norms_kept), eagerly; None when compiling or outside such a decode."""
    return None if torch.compiler.is_compiling() else _epilogue_norms.get()


def _epilogue_norms_taken(out: torch.Tensor) -> EpilogueNorms | None:
    """The decode's EpilogueNorms where the epilogue of conv output ``out`` (with a residual) may write its norm."""
    norms = _decode_epilogue_norms()
    if norms is None or chunk_ctas(out, 0) != 1 or not kernel_norm_is_atens(out):  # both settle off CUDA
        return None
    return norms


def _residual_epilogue(out: torch.Tensor, bias: torch.Tensor, residual: torch.Tensor,
                       residual_bias: torch.Tensor | None, writes_norm: bool,
                       **dup_factors: int | bool) -> torch.Tensor:
    """bias_add_contiguous with a residual (a DupUp3D source with ``dup_factors``); with ``writes_norm``, its
    output's channel norm kept for the next norm where EPILOGUE_NORMS can take it (_epilogue_norms_taken)."""
    norms = _epilogue_norms_taken(out) if writes_norm else None
    if norms is None:
        return bias_add_contiguous(out, bias, residual, residual_bias, **dup_factors)
    result, norm = bias_add_contiguous_norm(out, bias, residual, residual_bias, **dup_factors)
    norms.remember(result, norm)
    return result


def _written_norm(x: torch.Tensor) -> torch.Tensor | None:
    """The channel norm a conv2 epilogue wrote with x (EPILOGUE_NORMS), if any: handed out once."""
    norms = _decode_epilogue_norms()
    return None if norms is None else norms.take(x)


class RawConvOutput(NamedTuple):
    """A conv's output, its bias not yet added.

    RAW_CONV_OUTPUT_NORMS hands the conv-layout lever's (channels-last on CUDA) from a residual
    block's first conv to its second norm; FUSED_SHORTCUT_BIASES a residual block's 1x1x1
    shortcut conv's (stock's layout) to conv2's bias epilogue.
    """

    raw: torch.Tensor
    bias: torch.Tensor

    def with_bias(self) -> torch.Tensor:
        """What the conv would have handed on: the bias added, contiguous."""
        return bias_add_contiguous(self.raw, self.bias)


def _frames_to_5d(out: torch.Tensor, frames: int) -> torch.Tensor:
    """A resample Conv2d's (B * T, C, H, W) output as the (B, C, T, H, W) view stock's resample hands on."""
    return out.view(-1, frames, *out.shape[1:]).permute(0, 2, 1, 3, 4)


class DupUp3DShortcut(NamedTuple):
    """A residual up block's ``avg_shortcut(source, first_chunk=drop_first)``, not materialised.

    FUSED_DUP_UP3D_ADDS hands it to the upsampler, whose Conv2d bias epilogue adds it; where that
    does not run, ``added_to`` adds it as up_block_tail did (dup_up3d_add).
    """

    source: torch.Tensor
    factor_t: int
    factor_s: int
    repeats: int
    drop_first: bool

    def factors(self) -> dict[str, int | bool]:
        """The op arguments (bias_add_contiguous's) that describe this shortcut's index map."""
        return dict(dup_factor_t=self.factor_t, dup_factor_s=self.factor_s, dup_repeats=self.repeats,
                    dup_drop_first=self.drop_first)

    def added_to(self, x: torch.Tensor) -> torch.Tensor:
        """``x + shortcut``; a resample Conv2d's 4-D (B * T, C, H, W) x as its 5-D view first."""
        if x.dim() == 4:
            # Fields named, not ``*self[1:]``: Dynamo before torch 2.9 fails on a slice of a NamedTuple.
            shape = expected_main_shape(self.source, self.factor_t, self.factor_s, self.repeats, self.drop_first)
            x = _frames_to_5d(x, shape[2])
        return dup_up3d_add(x, self.source, self.factor_t, self.factor_s, self.repeats, self.drop_first)


Shortcut = torch.Tensor | RawConvOutput | DupUp3DShortcut


class ConvGeometry(NamedTuple):
    """What cuDNN picks its kernels by (not the values), and the settings ATen hands it: one verdict per geometry.

    ``cudnn_deterministic`` is what ATen's convs read: ``torch.backends.cudnn.deterministic`` or
    ``torch.use_deterministic_algorithms``; ``cudnn_enabled`` off sends convs to ATen's own kernels.
    """

    input_shape: tuple[int, ...]
    weight_shape: tuple[int, ...]
    stride: tuple[int, ...]
    padding: tuple[int, ...] | str
    dilation: tuple[int, ...]
    groups: int
    dtype: torch.dtype
    device: torch.device
    cudnn_benchmark: bool
    cudnn_deterministic: bool
    cudnn_allow_tf32: bool
    cudnn_enabled: bool


def _conv_geometry(conv: nn.Module, input_shape: tuple[int, ...], dtype: torch.dtype, device: torch.device) -> ConvGeometry:
    """The verdict key of ``conv`` on an input of this shape, dtype and device, under the current settings."""
    cudnn = torch.backends.cudnn
    return ConvGeometry(tuple(input_shape), tuple(conv.weight.shape), conv.stride, conv.padding, conv.dilation,
                        conv.groups, dtype, device, cudnn.benchmark,
                        cudnn.deterministic or torch.are_deterministic_algorithms_enabled(),
                        _backend.cudnn_convs_may_use_tf32(), cudnn.enabled)


# Whether the conv-layout lever gives stock's bits, per conv geometry: checked on first use,
# one check at a time (the profiler the check uses is one per process; decodes in other
# threads go on).
_channels_last_conv_verdicts: dict[ConvGeometry, bool] = {}
_channels_last_conv_check = threading.Lock()


def refused_conv_geometries() -> list[ConvGeometry]:
    """The conv geometries whose check refused the conv-layout lever in this process: they keep stock's layout.

    Exact either way; each costs its conv cuDNN's transposes and, but for an upsampler's Conv2d
    after its check, a copy of its input, so a decode slower than expected can start here.
    """
    return [geometry for geometry, ok in list(_channels_last_conv_verdicts.items()) if not ok]


def chunked_conv_geometries() -> list[ConvGeometry]:
    """The conv geometries that run conv3d_chunked in this process (CHUNKED_CONVS), checked equal to stock's conv.

    Those that run it only on inputs on the TF32 grid (TF32_GRID_CONV_INPUTS) included.
    """
    return [geometry for geometry, ok in list(_chunked_conv_verdicts.items()) if ok]


def clear_conv_verdicts() -> None:
    """Forget every per-geometry verdict (conv layout, chunked conv, latent stage): each is checked again on next use."""
    with _channels_last_conv_check:
        _channels_last_conv_verdicts.clear()
        _chunked_conv_verdicts.clear()
        _tail_splits.clear()
    with _latent_stage_check:
        _latent_stage_verdicts.clear()


def _channels_last_conv(
    conv: nn.Module,
    conv_input: Callable[[], torch.Tensor],
    residual: Shortcut | None = None,
    frames: int | None = None,
    raw_output: bool = False,
    tf32_grid_input: bool = False,
    writes_norm: bool = False,
    frame_groups: int = 1,
) -> torch.Tensor | RawConvOutput:
    """``conv(padded) + residual`` for ``padded = conv_input()`` channels-last, returned contiguous as stock's is.

    ``conv`` is a Conv3d (5-D input, channels_last_3d) or a Conv2d (4-D, channels_last).
    The input is built here and dropped as soon as the conv has run, before the bias
    epilogue allocates its output: the largest conv input of a decode is not alive at
    its memory peak. The first call per conv geometry also checks that the lever gives the
    stock layout's bits (``_lever_gives_stock_bits``); otherwise that geometry takes the
    stock layout from then on. A call that cannot check (inside a CUDA graph capture,
    where torch.equal would synchronise, or inside a running profiler, which the check's
    own would end) takes the stock layout until one can.
    With FUSED_RESIDUAL_ADDS the lever adds ``residual`` in its bias epilogue. With
    ``frames`` (a resample's Conv2d) and CONTIGUOUS_UPSAMPLER_OUTPUTS the lever returns the
    5-D (B, C, T, H, W) output contiguous; a stock-layout result stays 4-D. With
    ``raw_output`` (a Conv3d without residual) the lever hands on its output raw, as a
    RawConvOutput; a stock-layout result is a tensor as ever. With ``tf32_grid_input`` the input
    is fp32 on the TF32 grid (TF32_GRID_CONV_INPUTS) and the conv is conv3d_chunked reading it as loaded.
    A DupUp3DShortcut ``residual`` (a resample Conv2d's, with ``frames``) is added to the 5-D output.
    With ``writes_norm`` a fused residual epilogue also writes its output's channel norm for the next norm
    (EPILOGUE_NORMS). With ``frame_groups`` (a Conv3d without residual or raw output) the output's channel groups
    come interleaved along the frames (``interleave_frame_groups``), the lever's bias epilogue writing them so.
    """
    padded = conv_input()
    if isinstance(residual, DupUp3DShortcut):
        fusable = frames is not None and CONTIGUOUS_UPSAMPLER_OUTPUTS
    else:
        fusable = FUSED_RESIDUAL_ADDS
    # A shortcut of another dtype (a hooked shortcut conv, say) gets stock's promoting add.
    fuse = fusable and residual is not None and _shortcut_dtype(residual) == padded.dtype

    def bias_epilogue(out: torch.Tensor, fused: bool, groups: int = 1) -> torch.Tensor:
        shortcut = residual if fused else None
        if out.dim() == 5:
            if isinstance(shortcut, RawConvOutput):  # the shortcut conv's bias is added here too
                return _residual_epilogue(out, conv.bias, shortcut.raw, shortcut.bias, writes_norm)
            if shortcut is None:
                return bias_add_contiguous(out, conv.bias, frame_groups=groups)
            return _residual_epilogue(out, conv.bias, shortcut, None, writes_norm)
        if isinstance(shortcut, DupUp3DShortcut):  # fused only with frames and CONTIGUOUS_UPSAMPLER_OUTPUTS
            return _residual_epilogue(_frames_to_5d(out, frames), conv.bias, shortcut.source, None,
                                      writes_norm and DUP_UP3D_EPILOGUE_NORMS, **shortcut.factors())
        shortcut = _shortcut_tensor(shortcut)
        if frames is not None and CONTIGUOUS_UPSAMPLER_OUTPUTS and shortcut is None:
            return bias_add_contiguous(_frames_to_5d(out, frames), conv.bias)
        # A Conv2d's (N, C, H, W) as the op's (N, C, 1, H, W).
        shortcut = None if shortcut is None else shortcut.unsqueeze(2)
        return bias_add_contiguous(out.unsqueeze(2), conv.bias, shortcut).squeeze(2)

    def stock_layout(padded: torch.Tensor) -> torch.Tensor:
        return (nn.Conv3d if padded.dim() == 5 else nn.Conv2d).forward(conv, padded.contiguous())

    def conv_without_bias(padded: torch.Tensor) -> torch.Tensor:
        return conv._conv_forward(padded, _conv_weight_for(conv.weight, padded), None)

    def lever_output(out: torch.Tensor) -> torch.Tensor | RawConvOutput:
        if raw_output and residual is None and out.dim() == 5:
            return RawConvOutput(out, conv.bias)
        return _add_residual(bias_epilogue(out, fuse, frame_groups), None if fuse else residual)

    key = _conv_geometry(conv, tuple(padded.shape), padded.dtype, padded.device)
    compiling = torch.compiler.is_compiling()
    recorded = _recorded_verdicts(key) if compiling else None
    if tf32_grid_input:
        # Asked for only where this geometry's verdicts both took conv3d_chunked (_takes_tf32_grid_input).
        order = recorded[1] if compiling else _chunked_conv_verdicts[key]
        out = _chunked_conv(conv, padded, order, truncate_x=True)
        del padded
        return lever_output(out)
    epilogue = functools.partial(bias_epilogue, fused=False)
    verdict = recorded[0] if compiling else _verdict(
        _channels_last_conv_verdicts, key, padded, _lever_gives_stock_bits,
        (padded, stock_layout, conv_without_bias, epilogue, frames),
        "channels-last conv input not bit-exact for %s: this geometry keeps the stock layout",
    )
    if not verdict:
        # A refused geometry's channels-last input goes as soon as its stock-layout copy exists.
        padded = padded.contiguous()
        return interleave_frame_groups(_add_residual(stock_layout(padded), residual), frame_groups)
    # A graph takes a recorded verdict as it stands: an eager call found the op taking this geometry.
    if compiling:
        chunked_verdict = recorded[1] if CHUNKED_CONVS else None
    elif _takes_chunked_conv(conv, padded):
        chunked_verdict = _verdict(
            _chunked_conv_verdicts, key, padded, _chunked_conv_gives_stock_bits,
            (padded, stock_layout, conv_without_bias, functools.partial(_chunked_conv, conv), epilogue,
             functools.partial(_tail_segment_counts, conv, padded), functools.partial(_tail_splits.__setitem__, key)),
            "conv3d_chunked not bit-exact for %s: this geometry keeps cuDNN's conv",
        )
    else:
        chunked_verdict = None
    if chunked_verdict is ChunkedConv.ANY_INPUT:
        conv_without_bias = functools.partial(_chunked_conv, conv, order=ChunkedConv.ANY_INPUT)
    out = conv_without_bias(padded)
    del padded
    return lever_output(out)


# ATen lays a contiguous conv weight out channels-last on every call of a conv with a
# channels-last CUDA input, with a generic strided copy (0.5-1.1 TB/s on an H200: 0.034 s of a
# Wan2.2 bf16 decode). channels_last_copy makes the same tensor faster (Wan2.2's 1024 -> 1024
# weights: 37 us against ATen's 100 us, session 16); handed it, ATen copies nothing and cuDNN
# computes on the same tensors: the same bits. Only large weights: below ~4 M elements ATen's
# copy takes under ~20 us, and the op's Python launch (20-60 us of CPU time measured) would
# cost more than it saves. Wan2.1's largest weights (384 -> 384) stay below.
CHANNELS_LAST_WEIGHT_COPIES = True
_COPIED_WEIGHT_ELEMENTS = 1 << 22

# The smaller weights, which ATen keeps copying on every call (~250 calls and ~0.005 s of ATen's strided
# copies in a Wan2.2 bf16 480x832 decode, gpu-logs/session34/C), are copied once per decode instead:
# decode_latents keeps a copy of each for its frame loop and drops them all when it returns. The copy is the
# tensor ATen would make itself (``weight.contiguous(memory_format=...)``), so the bits cannot change. Up to
# DECODE_WEIGHT_COPY_BYTES of copies per decode, first come first kept.
DECODE_WEIGHT_COPIES = True
DECODE_WEIGHT_COPY_BYTES = 64 << 20
# Which weights are worth keeping is set by how often they are called: the stages every later chunk runs (the
# last batched up block's upsampler, the up blocks after it, the head) call theirs once per latent frame, the
# batched latent stage once per group of frames. First come, the latent stage's (met first, in frame 0's walk)
# spent the budget: Wan2.1's per-chunk weights went uncopied, and Wan2.2's large ones went through
# channels_last_copy on every call (~160 calls, ~0.002 s of a bf16 480x832 decode, gpu-logs/session43/A). So the
# per-chunk stages' weights are kept first, large ones too, up to PER_CHUNK_WEIGHT_COPY_BYTES (Wan2.2's are 154
# MiB in bf16, Wan2.1's 18 MiB: the peak-memory target has room for them); the budget above is for the rest.
PER_CHUNK_WEIGHT_COPIES = True
PER_CHUNK_WEIGHT_COPY_BYTES = 192 << 20


def version_counter(tensor: torch.Tensor) -> int | None:
    """The tensor's in-place version counter; None for an inference tensor (made under ``torch.inference_mode``),
    which keeps none."""
    return None if tensor.is_inference() else tensor._version


class DecodeWeightCopies:
    """The channels-last copies of conv weights one decode keeps (DECODE_WEIGHT_COPIES), by weight.

    The ``per_chunk`` weights (PER_CHUNK_WEIGHT_COPIES) are kept whatever their size, in their order while they
    fit in ``per_chunk_budget_bytes``; other small ones first come, within ``budget_bytes``. A copy is handed on
    only while its weight is unchanged (the same tensor at the same version counter); a weight changed in place
    during the decode is copied again.
    """

    def __init__(
        self, budget_bytes: int, per_chunk: Iterable[torch.Tensor] = (), per_chunk_budget_bytes: int = 0
    ) -> None:
        self.copies: dict[int, tuple[torch.Tensor, int | None, torch.Tensor]] = {}
        self.bytes_left = budget_bytes
        self.per_chunk: dict[int, torch.Tensor] = {}
        for weight in per_chunk:
            size = weight.numel() * weight.element_size()
            if size <= per_chunk_budget_bytes and id(weight) not in self.per_chunk:
                per_chunk_budget_bytes -= size
                self.per_chunk[id(weight)] = weight

    def copy_of(self, weight: torch.Tensor, layout: torch.memory_format) -> torch.Tensor | None:
        """``weight`` laid out in ``layout``, kept for the next call; None for a weight this decode does not keep."""
        kept = self.copies.get(id(weight))
        if kept is not None and kept[0] is weight and kept[1] == version_counter(weight):
            return kept[2]
        large = weight.numel() >= _COPIED_WEIGHT_ELEMENTS
        if kept is None and self.per_chunk.get(id(weight)) is not weight:
            size = weight.numel() * weight.element_size()
            if large or size > self.bytes_left:
                return None
            self.bytes_left -= size
        # A large weight's copy by channels_last_copy, as it would be per call: the same tensor, faster.
        copy = channels_last_copy(weight) if large and CHANNELS_LAST_WEIGHT_COPIES else weight.contiguous(
            memory_format=layout)
        self.copies[id(weight)] = (weight, version_counter(weight), copy)
        return copy


_decode_weight_copies: contextvars.ContextVar[DecodeWeightCopies | None] = contextvars.ContextVar(
    "torch_wanops_decode_weight_copies", default=None
)


# decode_latents runs without autograd (batches_latent_stage), so its frame loop dispatches every op below the
# autograd layer, as each op would end up anyway: the wanops ops skip their Python autograd kernel (its
# forward_no_grad and redispatch, ~5-10 us of CPU per call) and ATen's ops their autograd wrappers. Views and
# in-place version counters are kept (that layer, ADInplaceOrView, still runs). Eager only: a compiled graph
# has no per-op dispatch to trim.
DISPATCH_BELOW_AUTOGRAD = True


def dispatch_below_autograd() -> contextlib.AbstractContextManager:
    """Skip the autograd dispatch layer within the block (DISPATCH_BELOW_AUTOGRAD); only with grad mode off."""
    # A private guard (torch.library's own autograd kernel enters it); a torch without it dispatches as ever.
    below_autograd = getattr(torch._C, "_AutoDispatchBelowAutograd", None)
    if below_autograd is None or not DISPATCH_BELOW_AUTOGRAD or torch.is_grad_enabled() or torch.compiler.is_compiling():
        return contextlib.nullcontext()
    return below_autograd()


@contextlib.contextmanager
def weight_copies_kept(per_chunk: Iterable[torch.Tensor] = ()) -> Iterator[None]:
    """Within the block, conv weights are copied channels-last once (DECODE_WEIGHT_COPIES), not per call: the
    ``per_chunk`` ones first (PER_CHUNK_WEIGHT_COPIES), then other small ones."""
    copies = None
    if DECODE_WEIGHT_COPIES:
        copies = DecodeWeightCopies(DECODE_WEIGHT_COPY_BYTES, per_chunk if PER_CHUNK_WEIGHT_COPIES else (),
                                    PER_CHUNK_WEIGHT_COPY_BYTES)
    token = _decode_weight_copies.set(copies)
    try:
        yield
    finally:
        _decode_weight_copies.reset(token)


def per_chunk_conv_weights(decoder: nn.Module, up_blocks: int) -> list[torch.Tensor]:
    """The conv weights of what _decode_after_latent_stage runs for every later chunk after a stage through
    ``up_blocks`` up blocks: the last such block's modules past its residual blocks, the later up blocks, the
    head; in module order."""
    last = decoder.up_blocks[up_blocks - 1]
    modules = [child for name, child in last.named_children() if name != "resnets"]
    modules += [*decoder.up_blocks[up_blocks:], decoder.conv_out]
    return [conv.weight for module in modules for conv in module.modules() if isinstance(conv, nn.modules.conv._ConvNd)]


def _conv_weight_for(weight: torch.Tensor, padded: torch.Tensor) -> torch.Tensor:
    """The weight to hand a conv of ``padded``: where ATen would copy it channels-last itself, the decode's kept
    copy (inside weight_copies_kept), else channels_last_copy's (large weights) or the weight (ATen copies it)."""
    layout = channels_last_format(padded)
    if not (
        padded.is_cuda
        and weight.dtype == padded.dtype
        and padded.is_contiguous(memory_format=layout)
        # ATen's conv picks channels-last by its input's suggested layout, not by is_contiguous: handed a
        # channels-last weight for an input it would call contiguous, it would switch kernels (a one-frame
        # upsampler input of frames stored inside each pixel, tests/test_reliability.py's fp32 tiny decodes).
        and aten_suggests_channels_last(padded)
        and weight.is_contiguous()
        and not weight.is_contiguous(memory_format=layout)
    ):
        return weight
    copies = None if torch.compiler.is_compiling() else _decode_weight_copies.get()
    kept = None if copies is None else copies.copy_of(weight, layout)
    if kept is not None:
        return kept
    if weight.numel() >= _COPIED_WEIGHT_ELEMENTS and CHANNELS_LAST_WEIGHT_COPIES:
        return channels_last_copy(weight)
    return weight


def _chunked_conv(
    conv: nn.Module,
    padded: torch.Tensor,
    order: ChunkedConv,
    truncate_x: bool = False,
    tail: tuple[int, int] | None = None,
) -> torch.Tensor:
    """conv3d_chunked in the order stock's conv kernel sums this geometry (its verdict).

    ``tail`` is (tail_tiles, tail_segments); by default a tail-split verdict's split as its check
    found it (``_tail_split_giving``), (0, 1) for the other verdicts.
    """
    if tail is None:
        tail = (
            _recorded_tail_split(_conv_geometry(conv, tuple(padded.shape), padded.dtype, padded.device))
            if order is ChunkedConv.TF32_GRID_ONLY_TAIL_SPLIT
            else (0, 1)
        )
    return conv3d_chunked(padded, conv.weight, truncate_x, *tail)


def _tail_split_giving(
    reference: torch.Tensor,
    chunked_output: Callable[[tuple[int, int]], torch.Tensor],
    segment_counts: Callable[[int], range],
) -> tuple[int, int] | None:
    """The (tail_tiles, tail_segments) with which ``chunked_output(tail)`` gives ``reference``'s bits, or None.

    cuDNN's ``segment_k_on`` 128x128x32 TF32 kernel adds most output tiles in the chunk order and
    splits some of the last ones along K into equal runs added last to first (H200, session 19,
    ``benchmarks/probe_split_tiles.py``). How many tiles and runs is not one rule: 36 of 6240 tiles in
    3 runs for Wan2.1's 192 -> 192 convs at 480x832, 27 of 2700 in 3 runs at 720x1280's later-chunk
    384 -> 384 convs, where the 60 tiles left after whole waves over the 132 SMs would say 60 in 2.
    So the check reads the split off its probe: the tiles the unsplit sum gets wrong are the split
    ones, counted from the first to the last tile, and each count of runs ``segment_counts(tiles)``
    allows is tried in turn. None where no count gives the bits (720x1280's later-chunk 192 -> 192
    convs: 12 of 14400 tiles, no even split matched in sessions 19 and 23).
    """
    tail = _tiles_from_first_difference(chunked_output((0, 1)), reference)
    if not tail:
        return 0, 1
    for segments in segment_counts(tail):
        if _same_bits(chunked_output((tail, segments)), reference):
            return tail, segments
    return None


def _tiles_from_first_difference(candidate: torch.Tensor, reference: torch.Tensor) -> int:
    """How many of the output's tiles (conv3d_chunked's tail tiles: TAIL_TILE positions x TAIL_TILE
    channels, position blocks in order, channel blocks fastest) run from the first tile where
    ``candidate`` and ``reference`` differ to the last; 0 where they are equal."""
    channels = candidate.shape[1]
    differs = candidate.ne(reference).movedim(1, -1).reshape(-1, channels)  # (positions, channels)
    positions = differs.shape[0]
    grid = differs.new_zeros(-(-positions // TAIL_TILE) * TAIL_TILE, -(-channels // TAIL_TILE) * TAIL_TILE)
    grid[:positions, :channels] = differs
    tiles = grid.view(grid.shape[0] // TAIL_TILE, TAIL_TILE, grid.shape[1] // TAIL_TILE, TAIL_TILE).any(3).any(1)
    first = tiles.flatten().nonzero()
    return tiles.numel() - int(first[0]) if first.numel() else 0


def _tail_segment_counts(conv: nn.Module, padded: torch.Tensor, tail_tiles: int) -> range:
    """The runs ``tail_tiles`` split tiles may each take in cuDNN's ``segment_k_on`` kernel: at least 2,
    at most one K step each, and all their programs within one wave of one per SM."""
    return range(2, min(_multiprocessors(padded.device) // tail_tiles, k_steps(padded, conv.weight)) + 1)


def _recorded_tail_split(key: ConvGeometry) -> tuple[int, int]:
    """The tail split the check found for ``key``, a tail-split verdict's geometry (a graph's constant, as its verdicts)."""
    return _tail_split_of(*key)


@torch.compiler.assume_constant_result
def _tail_split_of(*key: Any) -> tuple[int, int]:
    return _tail_splits[ConvGeometry(*key)]


@torch.compiler.assume_constant_result
def _multiprocessors(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count


def _verdict(
    verdicts: dict[ConvGeometry, bool],
    key: ConvGeometry,
    padded: torch.Tensor,
    check: Callable[..., bool | None],
    check_args: tuple,
    refusal: str,
) -> bool | None:
    """The verdict on ``key``, from ``check(*check_args)`` on first use (one check at a time); None while none can be had."""
    verdict = verdicts.get(key)
    if verdict is None and _can_check_now(padded):
        with _channels_last_conv_check:
            verdict = verdicts.get(key)
            if verdict is None:
                verdict = check(*check_args)
                if verdict is not None:
                    verdicts[key] = verdict
                if verdict is False:
                    logger.info(refusal, key)
    return verdict


def _refused_geometry(conv: nn.Module, input_shape: tuple[int, ...], x: torch.Tensor) -> bool:
    """Whether the conv-layout check refused ``conv`` on inputs of this shape (and x's dtype and device) already."""
    return _recorded_verdicts(_conv_geometry(conv, input_shape, x.dtype, x.device))[0] is False


def _recorded_verdicts(key: ConvGeometry) -> tuple[bool | None, ChunkedConv | bool | None]:
    """The conv-layout and chunked-conv verdicts on ``key`` as eager calls left them (None: not checked yet).

    What a graph being compiled takes: the checks cannot run while Dynamo traces (they time and
    profile real convs), so the compile helper runs each chunk shape's first call eagerly
    (torch_wanops.compile). Read once per trace, as a constant of the graph without a guard: an
    unchecked geometry keeps stock's layout and cuDNN's conv in that graph, exact and slower.
    """
    return _verdicts_of(*key)  # Dynamo hands a constant-result function a NamedTuple as () (torch 2.13)


@torch.compiler.assume_constant_result
def _verdicts_of(*key: Any) -> tuple[bool | None, ChunkedConv | bool | None]:
    geometry = ConvGeometry(*key)
    return _channels_last_conv_verdicts.get(geometry), _chunked_conv_verdicts.get(geometry)


def _can_check_now(padded: torch.Tensor) -> bool:
    """Not inside a CUDA graph capture (torch.equal would synchronise) or a running profiler (ours would end it)."""
    return not padded.is_cuda or not (torch.cuda.is_current_stream_capturing() or torch.autograd._profiler_enabled())


def _lever_gives_stock_bits(
    padded: torch.Tensor,
    stock_layout: Callable[[torch.Tensor], torch.Tensor],
    conv_without_bias: Callable[[torch.Tensor], torch.Tensor],
    bias_epilogue: Callable[[torch.Tensor], torch.Tensor],
    frames: int | None,
) -> bool | None:
    """Whether the lever's conv and bias epilogue give the stock layout's bits for ``padded``'s geometry.

    None where it cannot tell now: the profiler would not start (another one running, in
    another thread say); the call takes the stock layout and a later one checks.

    On CUDA the lever's conv must first run the same kernels as the stock layout's, cuDNN's
    layout passes apart (``_conv_kernels``), or kernels that add in the same order
    (``summation_orders``): the same kernel on the same NDHWC values gives the same bits
    whatever the values, while two kernels that add in different orders can agree on some
    values and not on others (fp32 with TF32). Then the outputs are compared on random values of
    that shape and layout, not on the decode's: a first chunk's conv inputs are mostly causal
    zero padding, and on an all-zero input any conv gives its bias whatever the algorithm.
    The conv alone is judged: a residual added after rounding could hide a difference. A
    private generator leaves the caller's random state alone.

    The probe is a random value per row plus a random value per column, built once in the
    stock layout and once, after the stock-layout calls, in the conv input's layout: the same
    values in either, with one full-size probe alive at a time. The first decode's memory peak
    is in these checks, beside the decode's own conv input (meta-device estimate, Wan2.1 fp32
    480x832x81: 7.26 GiB of tensors, 7.83 with a probe copied between layouts; stock 7.61).
    """
    with torch.no_grad():  # in a grad-mode decode too: nothing of the check is kept
        rows, columns = _probe_factors(padded)
        probe = torch.add(rows, columns, out=padded.new_empty(padded.shape))  # the stock layout
        compares_kernels, stock_kernels = _compares_kernels(padded), None
        if compares_kernels:
            stock_run = _conv_kernels(conv_without_bias, probe)
            if stock_run is None:
                return None
            stock_kernels = stock_run[1]
            del stock_run
        reference = stock_layout(probe)
        del probe
        probe = torch.add(rows, columns, out=torch.empty_like(padded))
        if compares_kernels:
            lever_run = _conv_kernels(conv_without_bias, probe)
            if lever_run is None:
                return None
            out, lever_kernels = lever_run
            del lever_run
            if not stock_kernels or summation_orders(lever_kernels) != summation_orders(stock_kernels):
                logger.info("conv kernels differ by layout (stock %s, channels-last %s)", stock_kernels, lever_kernels)
                return False
        else:
            out = conv_without_bias(probe)
        del probe
        candidate = bias_epilogue(out)
        del out
    if candidate.dim() != reference.dim():  # a resample Conv2d's output handed on as 5-D
        reference = _frames_to_5d(reference, frames)
    return _same_bits(candidate, reference)


def _probe_factors(padded: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A check's probe ``rows + columns``: a random value per row and per column, from a private generator."""
    generator = torch.Generator(padded.device if padded.is_cuda else "cpu").manual_seed(0)
    rows = padded.new_empty((*padded.shape[:-1], 1)).normal_(generator=generator)
    columns = padded.new_empty(padded.shape[-1]).normal_(generator=generator)
    return rows, columns


# Wan2.1's 96-channel convs through conv3d_chunked. cuDNN runs them (bf16 and fp16, either
# layout) with implicit-GEMM kernels whose K tile is 32 channels, and those add the products in
# 32-channel chunks, the kernel taps inside each chunk: a Triton implicit GEMM in that order gave
# cuDNN's bits on every probe (H200, cuDNN 9.19, session 15: 96 -> 96 at 6x482x834 and 3x482x834,
# 96 -> 3, values spread over 2**+-8, no mismatch of ~150 M outputs), the taps-outer order at
# about 1.5e-3 of the outputs. It runs the 96 -> 96 convs in 1.68 ms where cuDNN takes 2.69 ms
# (its 256x32x32 tile on sm80 instructions), and the head's 96 -> 3 in 0.98 ms against 1.05.
# Taken per geometry only where stock's conv runs one kernel of those families and the chunked
# conv then gives its bits on the check's probe, and only for outputs of at least
# _CHUNKED_CONV_POSITIONS positions: below ~48 K (a 4-frame chunk of 64x128, say) cuDNN was as fast
# or faster, the op's launch no longer hidden (session 16: 0.60x at 8 K positions, 0.90-1.06x at
# 32 K, 1.20-1.28x from 61 K up).
# fp32 (session 17, TF32 as PyTorch allows by default): cuDNN runs the same convs with an sm90
# TF32 kernel with a 256x32x32 tile, in the same chunk order with both operands rounded to TF32,
# ties to even; the op so rounds, and gave its bits on every such probe (96 -> 96 at 480x832 and
# 240x416, 192 -> 96), 4.8 against cuDNN's 5.6 ms at 96 -> 96 6x482x834. Its 128x128x32 kernels
# (384 channels) sum in the same order but run faster than the op rounding x in registers, and their
# `segment_k_on` variant (192 channels, and 384 at 720x1280's later chunks) too, but for some of the
# last tiles, which it splits along K (sessions 19 and 26, _tail_split_giving).
# With TF32_GRID_CONV_INPUTS (session 18) the fused norm writes the fp32 conv input of a geometry
# already checked on the TF32 grid, and the op reads it as loaded: 3.3 against 4.8 ms at
# 96 -> 96 (session 17's pre-rounded probe), and faster than cuDNN's 128x128x32 kernels too
# (384 -> 384 at 4x122x210: 1.51 against 1.83 ms; 1.31 ms on session 19's wider tile; 192 -> 192 at
# 6x242x418 2.59 against 3.09 ms with its tail tiles split), which are so taken for such inputs only
# (ChunkedConv.TF32_GRID_ONLY*), and only where the op ran faster in the check: not so at Wan2.2's
# 256- and 512-channel convs, where taking them cost its fp32 decode 0.22 s (session 18).
CHUNKED_CONVS = True
TF32_GRID_CONV_INPUTS = True
_CHUNKED_CONV_POSITIONS = 48 * 1024


class ChunkedConv(enum.Enum):
    """A geometry's chunked-conv verdict where conv3d_chunked gave stock's bits (False where it keeps cuDNN's conv)."""

    ANY_INPUT = "conv3d_chunked for any input"
    TF32_GRID_ONLY = "conv3d_chunked for fp32 inputs on the TF32 grid"
    # cuDNN's segment_k_on kernel: the chunk order, but some of the last tiles split along K.
    TF32_GRID_ONLY_TAIL_SPLIT = "conv3d_chunked for fp32 inputs on the TF32 grid, its tail tiles split as cuDNN's"


_chunked_conv_verdicts: dict[ConvGeometry, ChunkedConv | bool] = {}
# (tail_tiles, tail_segments) of each tail-split verdict's geometry, as its check found them.
_tail_splits: dict[ConvGeometry, tuple[int, int]] = {}
_CHUNK_ORDER_KERNELS = (
    re.compile(
        r"sm80_xmma_fprop_implicit_gemm_(bf16bf16_bf16f32|f16f16_f16f32)_f32_nhwckrsc_nhwc_tilesize\d+x\d+x32_"
        r"stage\d+_warpsize\d+x\d+x\d+_g1_tensor16x8x16_execute_kernel__5x_cudnn"
    ),
    re.compile(
        r"sm90_xmma_fprop_implicit_gemm_(bf16bf16_bf16f32|f16f16_f16f32)_f32_nhwckrsc_nhwc_tilesize\d+x\d+x32_"
        r"warpgroupsize\d+x\d+x\d+_g1_execute_segment_k_off_kernel__5x_cudnn"
    ),
)
# fp32 as TF32, the same order; the groups are the tile (positions x output channels) and whether K
# segments are on. Only the 32-wide tile is slower than the op rounding x in registers: wider ones are
# taken for TF32-grid inputs only; with K segments, the 128x128 tile only (_tail_split_giving).
_TF32_CHUNK_ORDER_KERNEL = re.compile(
    r"sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize(\d+x\d+)x32_"
    r"warpgroupsize\d+x\d+x\d+_g1_execute_segment_k_(on|off)_kernel__5x_cudnn"
)
# The workspace a segment_k_on kernel's split tiles meet in, zeroed before it runs: no arithmetic.
_WORKSPACE_KERNEL = "init_device_workspace_kernel"


def _takes_chunked_conv(conv: nn.Module, padded: torch.Tensor) -> bool:
    """Whether the lever's conv may be conv3d_chunked (checked per geometry): a plain Conv3d on CUDA the kernel takes."""
    return (
        CHUNKED_CONVS
        and padded.is_cuda
        and padded.dim() == 5
        and tuple(conv.stride) == (1, 1, 1)
        and tuple(conv.padding) == (0, 0, 0)
        and tuple(conv.dilation) == (1, 1, 1)
        and conv.groups == 1
        and takes_chunked_kernel(padded)
        and _output_positions(conv, padded) >= _CHUNKED_CONV_POSITIONS
    )


def _output_positions(conv: nn.Module, padded: torch.Tensor) -> int:
    """(batch, frame, row, column) positions of an unpadded, stride-1 conv's output."""
    batch, _, *sizes = padded.shape
    return batch * math.prod(n - k + 1 for n, k in zip(sizes, conv.kernel_size))


def _sums_in_chunk_order(kernels: collections.Counter[str]) -> ChunkedConv | bool:
    """How conv3d_chunked adds as the one cuDNN kernel a conv ran (memsets and workspace set-up apart),
    or False where it does not."""
    gemms = {name for name in kernels if not name.startswith("Memset") and _WORKSPACE_KERNEL not in name}
    if len(gemms) != 1:
        return False
    name = next(iter(gemms))
    if any(family.fullmatch(name) for family in _CHUNK_ORDER_KERNELS):
        return ChunkedConv.ANY_INPUT
    tf32 = _TF32_CHUNK_ORDER_KERNEL.fullmatch(name)
    if tf32 is None:
        return False
    tile, segments = tf32.groups()
    if segments == "on":
        return ChunkedConv.TF32_GRID_ONLY_TAIL_SPLIT if tile == "128x128" else False
    return ChunkedConv.ANY_INPUT if tile.endswith("x32") else ChunkedConv.TF32_GRID_ONLY


def _takes_tf32_grid_input(conv: nn.Module, x: torch.Tensor) -> bool:
    """Whether ``conv``'s fp32 input built from x may be written on the TF32 grid (TF32_GRID_CONV_INPUTS).

    Only where the geometry it will have already runs conv3d_chunked, both its verdicts in: the op
    then reads the input as loaded, and gives the bits it gives of the unrounded input (rounding
    twice is rounding once), which its check found equal to stock's conv.
    """
    if not (TF32_GRID_CONV_INPUTS and CHUNKED_CONVS and x.dtype == torch.float32):
        return False
    layout_verdict, chunked_verdict = _recorded_verdicts(
        _conv_geometry(conv, padded_shape(x, conv._padding), x.dtype, x.device)
    )
    return layout_verdict is True and bool(chunked_verdict)


def _chunked_conv_gives_stock_bits(
    padded: torch.Tensor,
    stock_layout: Callable[[torch.Tensor], torch.Tensor],
    conv_without_bias: Callable[[torch.Tensor], torch.Tensor],
    chunked_conv: Callable[..., torch.Tensor],
    bias_epilogue: Callable[[torch.Tensor], torch.Tensor],
    tail_segment_counts: Callable[[int], range],
    record_tail_split: Callable[[tuple[int, int]], None],
) -> ChunkedConv | bool | None:
    """The chunked-conv verdict for ``padded``'s geometry: how conv3d_chunked and the bias epilogue
    give the stock layout's bits (``chunked_conv(x, order, truncate_x=False, tail=...)``), or False.

    Stock's conv must run one kernel of the families whose order the chunked kernel follows
    (``_sums_in_chunk_order``); then the outputs are compared on the lever check's random probe,
    each layout's probe built in turn. For a tail-split family the split that gives stock's bits is
    found on the probe (``_tail_split_giving``, runs counted by ``tail_segment_counts``) and handed
    to ``record_tail_split`` with the verdict. None where the profiler would not start. A family
    taken on TF32-grid inputs only is taken only where the op reading such an input ran faster than
    stock's conv on the probe (session 18, H200: 1.5 against 1.8 ms at Wan2.1's 384 -> 384, slower
    than cuDNN at Wan2.2's 256 and 512 channels).
    """
    with torch.no_grad():
        rows, columns = _probe_factors(padded)
        probe = torch.add(rows, columns, out=padded.new_empty(padded.shape))  # the stock layout
        stock_run = _conv_kernels(conv_without_bias, probe)
        if stock_run is None:
            return None
        in_chunk_order = _sums_in_chunk_order(stock_run[1])
        if not in_chunk_order:
            logger.info("stock's conv kernels %s do not sum in conv3d_chunked's order", sorted(stock_run[1]))
            return False
        del stock_run
        reference = stock_layout(probe)
        del probe
        probe = torch.add(rows, columns, out=torch.empty_like(padded))

        def chunked_output(tail: tuple[int, int]) -> torch.Tensor:
            return bias_epilogue(chunked_conv(probe, in_chunk_order, tail=tail))

        if in_chunk_order is ChunkedConv.TF32_GRID_ONLY_TAIL_SPLIT:
            tail = _tail_split_giving(reference, chunked_output, tail_segment_counts)
        else:
            tail = (0, 1) if _same_bits(chunked_output((0, 1)), reference) else None
        del reference
        if tail is None:
            return False
        # The op's speed does not depend on the values: the probe stands in for a TF32-grid input.
        if in_chunk_order is not ChunkedConv.ANY_INPUT and not _runs_faster(
            functools.partial(chunked_conv, order=in_chunk_order, truncate_x=True, tail=tail), conv_without_bias, probe
        ):
            logger.info("conv3d_chunked slower than stock's conv for %s: it keeps cuDNN's", tuple(padded.shape))
            return False
    if in_chunk_order is ChunkedConv.TF32_GRID_ONLY_TAIL_SPLIT:
        record_tail_split(tail)
    return in_chunk_order


def _runs_faster(candidate: Callable[[torch.Tensor], torch.Tensor], incumbent: Callable[[torch.Tensor], torch.Tensor],
                 x: torch.Tensor, runs: int = 3, calls: int = 4) -> bool:
    """Whether ``candidate(x)`` ran faster than ``incumbent(x)`` on x's CUDA device: best of ``runs`` each, after a warm-up.

    Each run times ``calls`` calls back to back, as a decode issues its convs: the CPU queues the
    next call while the GPU runs one. A single call between two events would also time the
    candidate's launch from Python (session 19: 720x1280's first-chunk 192 -> 192 conv refused,
    1.60 against cuDNN's 1.79 ms when timed in a stream of calls). The two take turns run by run, so
    other work on the GPU (another process's kernels) lands on both alike (session 40: run all of one
    then all of the other, the candidate lost beside five test processes).
    """
    times: tuple[list[float], list[float]] = ([], [])
    with torch.cuda.device(x.device):  # the events time x's device's current stream, where the convs run
        for conv in (candidate, incumbent):
            conv(x)  # compiles, plans
        for _ in range(runs):
            for conv, conv_times in zip((candidate, incumbent), times):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(calls):
                    conv(x)
                end.record()
                end.synchronize()
                conv_times.append(start.elapsed_time(end))
    return min(times[0]) < min(times[1])


def _compares_kernels(x: torch.Tensor) -> bool:
    """Whether the check compares the kernels a conv of ``x`` launches: on CUDA, where the profiler sees them."""
    return x.is_cuda


# Passes that only move values (session 10, H200 profiles): cuDNN's NCDHW <-> NDHWC transposes
# and generic tensor transforms around a stock-layout conv, its tensor conversions and channel
# padding (to the kernel's channel alignment) around some channels-last ones, and ATen's
# same-dtype copy of the weight into a channels-last input's memory format, or channels_last_copy's
# in its place. A pass that scaled values would still meet the value comparison.
_LAYOUT_KERNEL_NAMES = (
    "nchwtonhwc", "nhwctonchw", "tensortransform", "converttensor", "addpadding", "removepadding", "direct_copy_kernel",
    "channels_last_copy_kernel",
)


# cuDNN's sm90 implicit-GEMM kernels with 16-bit inputs and no K segments: the tile's M x N only assigns outputs to
# CTAs, and every output adds its K steps (the tile's third number) one after the other in its own accumulator, so
# two such kernels that differ in M x N alone add in the same order (their exact fp32 products of bf16 or fp16
# inputs included). On the H200 Wan2.2 720x1280's upsampler Conv2d, (4, 512, 360, 640) x (512, 512, 3, 3), runs
# the 256x128x64 tile in stock's layout and the 128x256x64 one channels-last, with the same bits, 5.77 against 7.03
# ms (gpu-logs/session44/C); requiring the same names had kept it in stock's layout. TF32 kernels keep their names.
_SAME_ORDER_TILES = re.compile(
    r"^(sm90_xmma_fprop_implicit_gemm_(?:bf16bf16|f16f16)_\w*_tilesize)\d+x\d+(x\d+_\w*_segment_k_off_\w*)$")


def summation_orders(kernels: collections.Counter[str]) -> collections.Counter[str]:
    """``kernels`` (by name and count) with the names of kernels that add in the same order made equal."""
    orders: collections.Counter[str] = collections.Counter()
    for name, count in kernels.items():
        orders[_SAME_ORDER_TILES.sub(r"\1MxN\2", name)] += count
    return orders


def _conv_kernels(
    conv: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor
) -> tuple[torch.Tensor, collections.Counter[str]] | None:
    """``conv(x)`` and the CUDA kernels it launched, by name and count, cuDNN's layout passes apart.

    The kernels are empty where the profiler sees none (no CUPTI): the lever is then not
    taken. None where the profiler would not start.
    """
    torch.cuda.synchronize(x.device)
    with warnings.catch_warnings():  # the profiler's notes on its own use are not the user's business
        warnings.simplefilter("ignore")
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA])
        try:
            profiler.start()
        except RuntimeError as error:
            logger.info("conv-layout check postponed, the profiler would not start: %s", error)
            return None
        try:
            out = conv(x)
            torch.cuda.synchronize(x.device)
        finally:
            profiler.stop()
    return out, collections.Counter(
        event.name
        for event in profiler.events()
        if event.device_type == torch.autograd.DeviceType.CUDA
        and not any(layout in event.name.lower() for layout in _LAYOUT_KERNEL_NAMES)
    )


def _shortcut_tensor(shortcut: torch.Tensor | RawConvOutput | None) -> torch.Tensor | None:
    """The shortcut as stock hands it on: a raw shortcut conv output with its bias added."""
    return shortcut.with_bias() if isinstance(shortcut, RawConvOutput) else shortcut


def _shortcut_dtype(shortcut: Shortcut) -> torch.dtype:
    if isinstance(shortcut, DupUp3DShortcut):
        return shortcut.source.dtype
    return (shortcut.raw if isinstance(shortcut, RawConvOutput) else shortcut).dtype


def _add_residual(x: torch.Tensor, residual: Shortcut | None) -> torch.Tensor:
    """A residual block's ``x + shortcut`` (or an up block's DupUp3D shortcut's), in stock's operand order."""
    if residual is None:
        return x
    if isinstance(residual, DupUp3DShortcut):
        return residual.added_to(x)
    return x + _shortcut_tensor(residual)


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    return torch.equal(a, b)


def _norm_output_layout_is_stock(x: torch.Tensor, cached: object) -> bool:
    """Whether rms_norm_cat_pad_5d lays its outputs out as the stock modules would for x and the cache.

    So it does for x and the cache both contiguous or both canonically channels_last_3d,
    and (FRAME_MAJOR_NORMS_STOCK_LAYOUT) for a frame-major x with a cache that is not
    channels-last: both then give a contiguous conv input. Other layouts (mixed,
    ambiguous) take the stock modules.
    """
    cache = cached if isinstance(cached, torch.Tensor) else None
    layout = _dense_layout(x)
    if layout is None:
        return (
            FRAME_MAJOR_NORMS_STOCK_LAYOUT and is_frame_major(x) and (cache is None or not is_channels_last(cache))
        )
    return cache is None or _dense_layout(cache) == layout


def norm_act_conv(
    norm: nn.Module,
    activation: nn.Module,
    dropout: nn.Module | None,
    conv: nn.Module,
    x: torch.Tensor | RawConvOutput,
    feat_cache: FeatCache,
    feat_idx: list[int],
    channels_last_convs: bool = False,
    residual: torch.Tensor | None = None,
    raw_output: bool = False,
    norm_frames: int = 0,
) -> torch.Tensor | RawConvOutput:
    """``conv(dropout(activation(norm(x)))) [+ residual]`` with its cache step; norm, SiLU and padding in one op.

    With ``channels_last_convs`` (CUDA, a conv with a bias, x contiguous or, with
    FRAME_MAJOR_NORM_INPUTS, frame-major) the conv input is written channels_last_3d
    and the conv runs without its bias, which ``bias_add_contiguous`` adds while
    transposing back (and, with FUSED_RESIDUAL_ADDS, the residual): the layout cuDNN
    computes in, without its two transposes (see OmniWanDecoder.channels_last_convs).
    With ``raw_output`` such a conv's output is handed on raw (RawConvOutput), and a raw
    x is normalized with its bias added in the fused norm where the conv also takes the
    lever (RAW_CONV_OUTPUT_NORMS), or gets its bias added first otherwise. With ``norm_frames`` x is several
    causal chunks of so many frames, each normalized on its own as stock's chunk loop normalizes it.
    """
    bias = None
    if isinstance(x, RawConvOutput):
        if (
            RAW_CONV_OUTPUT_NORMS
            and _fuses_norm_act_conv(norm, activation, dropout, conv, x.raw)
            and _lever_conv(conv, x.raw, channels_last_convs)
        ):
            x, bias = x.raw, x.bias
        else:
            x = x.with_bias()
    channels_last = bias is not None or _takes_conv_layout_lever(conv, x, channels_last_convs)
    slot = None if feat_cache is None else feat_cache[feat_idx[0]]
    if bias is None and not (
        _fuses_norm_act_conv(norm, activation, dropout, conv, x)
        # Channels-last conv inputs do not depend on the cache's layout; stock-layout ones do.
        and (channels_last or _norm_output_layout_is_stock(x, slot))
    ):
        x = per_frame_chunk(lambda chunk: _stock_norm_act(norm, activation, chunk), x, norm_frames)
        if dropout is not None:
            x = dropout(x)
        return _add_residual(causal_conv(conv, x, feat_cache, feat_idx), residual)

    # Handed over, not kept (as stock's rebinding of x drops each step's input): once the conv
    # input is built, x is dropped, and the conv input once the conv has run. Callers pass x
    # as a temporary, so at the bias epilogue neither the block's intermediate activation nor
    # the padded conv input is alive (the peak of a decode's memory is at such a moment).
    tf32_grid_input = channels_last and _takes_tf32_grid_input(conv, x)
    # A norm per chunk of norm_frames is not the norm of all frames a conv2 epilogue wrote.
    x_norm = _written_norm(x) if bias is None and not norm_frames else None
    conv_input = [
        _padded_conv_input(
            lambda cached, keep, x=x: rms_norm_cat_pad_5d(
                x, norm.gamma, norm.scale, True, cached, conv._padding, keep, channels_last, bias, tf32_grid_input,
                norm_frames, x_norm,
            ),
            feat_cache,
            feat_idx,
        )
    ]
    del x
    if channels_last:
        return _channels_last_conv(conv, conv_input.pop, residual, raw_output=raw_output,
                                   tf32_grid_input=tf32_grid_input, writes_norm=not norm_frames)
    return _add_residual(nn.Conv3d.forward(conv, conv_input.pop()), residual)


def _stock_norm_act(norm: nn.Module, activation: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``activation(norm(x))`` as the stock modules compute it, a walkable WanRMS_norm (and SiLU) through wan_rms_norm.

    That op is stock's own code: eagerly the same kernels, and compiled too, where Inductor would
    otherwise generate the norm's reduction itself and round otherwise (the attention's output, a
    layout rms_norm_cat_pad_5d does not take, reaches the next residual block's norm this way).
    """
    bias = norm.bias if isinstance(norm, WanRMS_norm) else None
    if not (
        walkable(norm, WanRMS_norm)
        and (isinstance(bias, torch.Tensor) or (isinstance(bias, float) and bias == 0.0))
        and tuple(norm.gamma.shape) == wan_norm_shape(x, norm.channel_first)
        and norm.gamma.device == x.device
    ):
        return activation(norm(x))
    silu = walkable(activation, nn.SiLU)
    x = wan_rms_norm(x, norm.gamma, norm.scale, norm.channel_first, bias if isinstance(bias, torch.Tensor) else None,
                     silu)
    return x if silu else activation(x)


def _fuses_norm_act_conv(
    norm: nn.Module, activation: nn.Module, dropout: nn.Module | None, conv: nn.Module, x: torch.Tensor
) -> bool:
    """Whether rms_norm_cat_pad_5d can stand in for norm, activation, dropout and the conv's padding."""
    return (
        _fusable_norm(norm, x)
        and walkable(activation, nn.SiLU)
        and _is_identity_dropout(dropout)
        and _fusable_conv(conv)
    )


def _bias_added_after_conv(x: torch.Tensor) -> bool:
    """Whether ATen adds a conv's bias to its output of x in a pass of its own: cuDNN's convs
    (a CUDA x with cuDNN built and enabled) do not take the bias. CPU convs may add it inside (oneDNN)."""
    return x.is_cuda and _CUDNN_BUILT and torch.backends.cudnn.enabled


def _pointwise_conv(conv: nn.Module, x: torch.Tensor, raw: bool = False) -> torch.Tensor | RawConvOutput:
    """A residual block's shortcut: Identity, or a 1x1x1 causal conv (no padding, no cache).

    With ``raw``, such a conv whose bias ATen adds after it (``_bias_added_after_conv``) is run
    without its bias and handed on as a RawConvOutput (FUSED_SHORTCUT_BIASES).
    """
    if walkable(conv, WanCausalConv3d) and not any(conv._padding):
        # Stock pads by zero (a copy of x) before the conv; the conv sees the same values.
        if raw and conv.bias is not None and _bias_added_after_conv(x):
            return RawConvOutput(conv._conv_forward(x, conv.weight, None), conv.bias)
        return nn.Conv3d.forward(conv, x)
    return conv(x)


def residual_block(
    block: nn.Module,
    x: torch.Tensor,
    feat_cache: FeatCache,
    feat_idx: list[int],
    channels_last_convs: bool = False,
    norm_frames: int = 0,
) -> torch.Tensor:
    """A residual block on x; ``norm_frames``: x is several causal chunks of so many frames (norm_act_conv)."""
    if not walkable(block, WanResidualBlock):
        return block(x, feat_cache=feat_cache, feat_idx=feat_idx)
    raw_shortcut = FUSED_SHORTCUT_BIASES and FUSED_RESIDUAL_ADDS and _lever_conv(block.conv2, x, channels_last_convs)
    shortcut = _pointwise_conv(block.conv_shortcut, x, raw_shortcut)
    # x goes to the first step, and conv1's output to the second, as temporaries, which then own them (and drop
    # them once their conv inputs are built): no local keeps x alive through conv1 (where a conv shortcut has
    # already read it) or conv1's output through conv2. With the conv-layout lever and RAW_CONV_OUTPUT_NORMS
    # conv1's output goes raw, its bias added by the norm.
    block_input = [x]
    del x
    return norm_act_conv(
        block.norm2, block.nonlinearity, block.dropout, block.conv2,
        norm_act_conv(block.norm1, block.nonlinearity, None, block.conv1, block_input.pop(), feat_cache, feat_idx,
                      channels_last_convs, raw_output=RAW_CONV_OUTPUT_NORMS, norm_frames=norm_frames),
        feat_cache, feat_idx, channels_last_convs, residual=shortcut, norm_frames=norm_frames,
    )


def _zero_cache(x: torch.Tensor) -> torch.Tensor:
    """The tensor form of the "Rep" marker: CACHE_T zero frames, laid out like cat_pad_5d's caches."""
    batch, channels, _, height, width = x.shape
    memory_format = torch.channels_last_3d if is_channels_last(x) else torch.contiguous_format
    zeros = torch.empty(
        (batch, channels, CACHE_T, height, width), dtype=x.dtype, device=x.device, memory_format=memory_format
    )
    return zeros.zero_()


def _fusable_upsampling(resample_layers: nn.Module) -> bool:
    """The layers stock's upsampling modes build: WanUpsample (2x, nearest-exact), then a Conv2d."""
    if not (walkable(resample_layers, nn.Sequential) and len(resample_layers) == 2):
        return False
    upsample, conv = resample_layers
    return (
        walkable(upsample, WanUpsample)
        and upsample.size is None
        and upsample.scale_factor == (2.0, 2.0)
        and upsample.mode == "nearest-exact"
        and walkable(conv, nn.Conv2d)
    )


def upsample_conv(
    resample_layers: nn.Module, x: torch.Tensor, channels_last_convs: bool, shortcut: DupUp3DShortcut | None = None,
    writes_norm: bool = False,
) -> torch.Tensor:
    """Stock's upsampling step as the (B, C, T, H, W) tensor the resample hands on: the frame-major view of
    ``resample_layers(x.permute(0, 2, 1, 3, 4).reshape(B * T, C, H, W))`` (contiguous with
    CONTIGUOUS_UPSAMPLER_OUTPUTS and the conv-layout lever: same values), and ``shortcut`` added to it. With
    ``writes_norm`` the epilogue adding the shortcut also writes the output's channel norm for the next norm
    (EPILOGUE_NORMS)."""
    batch, channels, frames, height, width = x.shape
    if not (FUSED_UPSAMPLE and _fusable_upsampling(resample_layers)):
        out = resample_layers(x.permute(0, 2, 1, 3, 4).reshape(batch * frames, channels, height, width))
        out = _add_residual(out, shortcut)
    else:
        conv = resample_layers[1]
        upsampled = (batch * frames, channels, 2 * height, 2 * width)
        # For a contiguous or frame-major x, stock's Conv2d input is contiguous. A geometry the check
        # refused gets it so straight away, not as a copy of a channels-last one (Wan2.2 bf16 720x1280's
        # last upsampler: 0.078 s of copies per decode, gpu-logs/session21/A).
        if _takes_conv_layout_lever(conv, x, channels_last_convs) and not _refused_geometry(conv, upsampled, x):
            out = _channels_last_conv(conv, lambda: upsample_nearest_2x(x, True), residual=shortcut, frames=frames,
                                      writes_norm=writes_norm)
        else:
            out = _add_residual(conv(upsample_nearest_2x(x, False)), shortcut)
    return out if out.dim() == 5 else _frames_to_5d(out, frames)


def resample(
    module: nn.Module,
    x: torch.Tensor,
    feat_cache: FeatCache,
    feat_idx: list[int],
    zero_rep: bool,
    channels_last_convs: bool = False,
    shortcut: DupUp3DShortcut | None = None,
    writes_norm: bool = False,
) -> torch.Tensor:
    """An upsampling resample's forward, and ``shortcut`` (its up block's, FUSED_DUP_UP3D_ADDS) added to it, with
    the sum's channel norm written for the next norm if ``writes_norm`` (upsample_conv)."""
    if not walkable(module, WanResample) or module.mode not in ("upsample2d", "upsample3d"):
        return _add_residual(module(x, feat_cache=feat_cache, feat_idx=feat_idx), shortcut)
    if module.mode == "upsample3d" and feat_cache is not None:
        idx = feat_idx[0]
        if feat_cache[idx] is None:
            # First chunk: no temporal upsampling; later chunks start from zero frames,
            # marked "Rep" (stock) or, with zero_rep, stored as zeros so that every
            # later chunk sees the same cache types (one compiled graph, not two).
            feat_cache[idx] = _zero_cache(x) if zero_rep else REP_MARKER
            feat_idx[0] += 1
        else:
            # Stock's reshape of the time conv's 2C channels into two halves, stacked along the frames.
            x = causal_conv(module.time_conv, x, feat_cache, feat_idx, channels_last_convs, frame_groups=2)
    return upsample_conv(module.resample, x, channels_last_convs, shortcut, writes_norm)


def attention_block(block: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """Stock's ``WanAttentionBlock`` forward, its norm (of frames) from rms_norm_cat_pad_5d: the same bits.

    The rest is stock's sequence of operations on the same values, kept step for step: the 1x1
    convs, the single-head SDPA and the residual add. Under torch.compile, the norm so stays
    ATen's reduction instead of one Inductor would generate, and the output is laid out as
    eager calls laid it out (_in_eager_layout).
    """
    if not (walkable(block, WanAttentionBlock) and _fusable_norm(block.norm, x, images=True)):
        return block(x)
    batch, channels, frames, height, width = x.shape
    norm = block.norm
    # Stock's (B * T, C, H, W) frames, as a one-frame video. Its norm output keeps their layout, and
    # the 1x1 conv's bits can depend on it (oneDNN's did): only layouts the op writes take the op.
    frame_batch = x.permute(0, 2, 1, 3, 4).reshape(batch * frames, channels, height, width).unsqueeze(2)
    layout = _dense_layout(frame_batch)
    if layout is None:
        return block(x)
    normalized, _ = rms_norm_cat_pad_5d(
        frame_batch, norm.gamma.unsqueeze(-1), norm.scale, False, None, (0, 0, 0, 0, 0, 0), 0,
        layout == torch.channels_last_3d, None, False,
    )
    del frame_batch
    qkv = block.to_qkv(normalized.squeeze(2))
    del normalized
    qkv = qkv.reshape(batch * frames, 1, channels * 3, height * width).permute(0, 1, 3, 2).contiguous()
    query, key, value = qkv.chunk(3, dim=-1)
    attended = F.scaled_dot_product_attention(query, key, value)
    del qkv, query, key, value
    attended = attended.squeeze(1).permute(0, 2, 1).reshape(batch * frames, channels, height, width)
    out = block.proj(attended).view(batch, frames, channels, height, width).permute(0, 2, 1, 3, 4)
    geometry = _conv_geometry(block.proj, tuple(attended.shape), attended.dtype, attended.device)
    return _in_eager_layout((*geometry, x.stride()), out + x)


# The strides and dense memory format of the attention's output in eager calls, per proj conv
# geometry and x's strides. Compiled, the proj conv's output takes its fake's layout, channels-last,
# where cuDNN's real one was contiguous (H200, Wan2.1 480x832: the 1x1 conv on the attention's
# channels-last frames): the residual add then handed the next block another layout, whose convs
# ran other kernels, and the compiled decode left stock's bits (gpu-logs/session22 E, F: with the
# attention run eagerly it kept them). The values are the same in either layout.
_attention_output_layouts: dict[tuple, tuple[tuple[int, ...], torch.memory_format]] = {}


def _in_eager_layout(key: tuple, out: torch.Tensor) -> torch.Tensor:
    """``out`` laid out as eager calls of this key laid it out: recorded eagerly, taken by a graph.

    The graph writes it in the recorded memory format, then views it with the recorded strides,
    which may differ from Inductor's only in the strides of size-1 dimensions.
    """
    if not torch.compiler.is_compiling():
        memory_format = _dense_layout(out)
        if memory_format is not None:
            _attention_output_layouts[key] = (out.stride(), memory_format)
        return out
    recorded = _recorded_attention_layout(*key)
    if recorded is None or out.stride() == recorded[0]:
        return out
    strides, memory_format = recorded
    return out.contiguous(memory_format=memory_format).as_strided(out.shape, strides)


@torch.compiler.assume_constant_result
def _recorded_attention_layout(*key: Any) -> tuple[tuple[int, ...], torch.memory_format] | None:
    return _attention_output_layouts.get(key)


def mid_block(
    block: nn.Module,
    x: torch.Tensor,
    feat_cache: FeatCache,
    feat_idx: list[int],
    channels_last_convs: bool = False,
    contiguous_attention: bool = False,
) -> torch.Tensor:
    """The mid block; ``contiguous_attention`` hands the attention's output on contiguous (the latent stage's
    several-frame chunks: see _latent_stage)."""
    if not walkable(block, WanMidBlock):
        return block(x, feat_cache=feat_cache, feat_idx=feat_idx)
    x = residual_block(block.resnets[0], x, feat_cache, feat_idx, channels_last_convs)
    for attention, resnet in zip(block.attentions, block.resnets[1:]):
        if attention is not None:
            x = attention_block(attention, x)
            if contiguous_attention:
                x = x.contiguous()
        x = residual_block(resnet, x, feat_cache, feat_idx, channels_last_convs)
    return x


def up_block(
    block: nn.Module,
    x: torch.Tensor,
    feat_cache: FeatCache,
    feat_idx: list[int],
    first_chunk: bool,
    zero_rep: bool,
    channels_last_convs: bool = False,
) -> torch.Tensor:
    if not walkable_up_block(block):
        return block(x, feat_cache=feat_cache, feat_idx=feat_idx, first_chunk=first_chunk)
    source = _shortcut_source(block, x)
    stage = [x]
    del x
    x = residual_blocks(block.resnets, stage, feat_cache, feat_idx, channels_last_convs)
    return up_block_tail(block, x, source, feat_cache, feat_idx, first_chunk, zero_rep, channels_last_convs)


def residual_blocks(
    resnets: nn.ModuleList,
    stage: list[torch.Tensor],
    feat_cache: FeatCache,
    feat_idx: list[int],
    channels_last_convs: bool = False,
    norm_frames: int = 0,
) -> torch.Tensor:
    """``resnets`` in turn on the one tensor in ``stage``, each block's input handed to it as a temporary through
    that list: no local holds it through the block (where a conv shortcut has read it, it goes once norm1 has built
    conv1's input)."""
    for resnet in resnets:
        stage.append(residual_block(resnet, stage.pop(), feat_cache, feat_idx, channels_last_convs, norm_frames))
    return stage.pop()


def walkable_up_block(block: nn.Module) -> bool:
    return walkable(block, WanUpBlock) or walkable(block, WanResidualUpBlock)


def _shortcut_source(block: nn.Module, x: torch.Tensor) -> torch.Tensor | None:
    """What a walkable up block keeps of its input x for up_block_tail: a residual up block's DupUp3D shortcut
    reads x (stock clones it; nothing in the block writes to it in place); a plain up block, or a residual one
    without that shortcut (Wan2.2's last), keeps nothing."""
    return x if type(block) is WanResidualUpBlock and block.avg_shortcut is not None else None


def up_block_tail(
    block: nn.Module,
    x: torch.Tensor,
    source: torch.Tensor | None,
    feat_cache: FeatCache,
    feat_idx: list[int],
    first_chunk: bool,
    zero_rep: bool,
    channels_last_convs: bool = False,
    writes_norm: bool = True,
) -> torch.Tensor:
    """A walkable up block after its residual blocks: the upsampler, then a residual up block's DupUp3D
    shortcut of ``source``, the block's input. The output goes to a norm next (the next block's first, or the
    head's): where that norm takes a written one (``writes_norm``: not a norm per chunk of frames), the epilogue
    adding the shortcut writes it (EPILOGUE_NORMS)."""
    if type(block) is WanUpBlock:
        if block.upsamplers is None:
            return x
        return resample(block.upsamplers[0], x, feat_cache, feat_idx, zero_rep, channels_last_convs)
    avg_shortcut = block.avg_shortcut
    if avg_shortcut is None or not walkable(avg_shortcut, DupUp3D):
        if block.upsampler is not None:
            x = resample(block.upsampler, x, feat_cache, feat_idx, zero_rep, channels_last_convs)
        return x if avg_shortcut is None else x + avg_shortcut(source, first_chunk=first_chunk)
    shortcut = DupUp3DShortcut(
        source, avg_shortcut.factor_t, avg_shortcut.factor_s, avg_shortcut.repeats, bool(first_chunk))
    if block.upsampler is None:
        return shortcut.added_to(x)
    if FUSED_DUP_UP3D_ADDS:
        return resample(block.upsampler, x, feat_cache, feat_idx, zero_rep, channels_last_convs, shortcut, writes_norm)
    return shortcut.added_to(resample(block.upsampler, x, feat_cache, feat_idx, zero_rep, channels_last_convs))


# The latent-resolution stage (conv_in, the mid block, the first up block's residual blocks) run on
# LATENT_STAGE_FRAMES latent frames per call instead of one, by decode_latents (OmniAutoencoderKLWan's decode
# loop). One frame per call leaves Wan2.2's 1024 -> 1024 convs 1560 output positions on a narrow cuDNN tile;
# on the H200 the stage took 55.8 -> 37.8 ms of GPU time per bf16 480x832 decode, Wan2.1's 46.9 -> 37.0
# (gpu-logs/session30 D). The stage's causal caches hold only its own inputs, so a chunk of G frames computes
# what G one-frame chunks do; whether with the same bits depends on the kernels each op picks for G frames
# (Wan2.1's convs do not keep them at G = 2, 3 or 7 on the H200, session 30 C), so it is checked once per stage
# geometry (_latent_stage_frames). Whole bf16 decodes of both models on the H200 kept stock's bits with it, Wan2.2
# 480x832x81 1.036 -> 1.017 s and Wan2.1 0.820 -> 0.803 s side by side (gpu-logs/session31 A).
BATCHED_LATENT_STAGE = True
LATENT_STAGE_FRAMES = 5
# Where the check refuses LATENT_STAGE_FRAMES frames per call at every stage length, later groups try these
# smaller sizes in turn (each checked as its own geometry) before one frame per call. On the H200 Wan2.2 bf16
# 720x1280's stage (45x80) leaves the one-frame bits at 5 frames per call (ATen splits its 1024-channel norm over
# 15 blocks, one frame's over 16: gpu-logs/session44/F) and at 4 (the 3x3x3 conv: 16 of 21 frames equal), while its
# ops keep them at 2 and 3 (gpu-logs/session45/D); groups of 3 there: 2.2821 -> 2.2721 s (gpu-logs/session46/B).
LATENT_STAGE_SMALLER_FRAMES = (3,)
# The stage carried on through the first up block's upsampler and the second up block's residual blocks (two
# frames per latent frame there), each norm reduced per chunk of frames (rms_norm_cat_pad_5d's norm_frames:
# ATen's 1024-channel norm of 10 frames at 60x104 adds in another order than of 2, gpu-logs/session32 A), where
# each tensor the group then holds through its frames' later stages (the output, a residual up block's input)
# is at most STAGE_HELD_BYTES: the held frames add to the decode's memory peak. Wan2.2 bf16 at 480x832 (122 MiB
# each) takes it; at 720x1280, and Wan2.1 (its 384 channels at 120x208), the stage ends at the first up block.
LATENT_STAGE_THROUGH_SECOND_UP_BLOCK = True
STAGE_HELD_BYTES = 128 << 20
# The check compares values, which proves the same order only where the compared tensors are large: on the CPU a
# tiny config's bf16 stage (a few thousand outputs of few-term sums) matched one frame per call on its first group
# and not on a later one. Stages whose first conv outputs fewer elements per group are not batched, and only CUDA
# batches (where it was measured); the CPU, valid but unsupported, runs stock's frame loop.
LATENT_STAGE_MIN_ELEMENTS = 1 << 20
LATENT_STAGE_DEVICES = frozenset({"cuda"})

_latent_stage_verdicts: dict[tuple, bool] = {}
_latent_stage_check = threading.Lock()


def stage_up_blocks(decoder: nn.Module, x: torch.Tensor) -> int:
    """How many up blocks' residual blocks the batched stage of latent chunk x (B, C, T, H, W) runs: 2 (the first
    up block whole, the second's residual blocks) where LATENT_STAGE_THROUGH_SECOND_UP_BLOCK allows it and each
    tensor a group holds stays within STAGE_HELD_BYTES, else 1."""
    blocks = decoder.up_blocks
    if not (LATENT_STAGE_THROUGH_SECOND_UP_BLOCK and len(blocks) > 1 and walkable_up_block(blocks[1])
            and walkable(blocks[1].resnets[-1], WanResidualBlock)):
        return 1
    upsampler = blocks[0].upsamplers[0] if type(blocks[0]) is WanUpBlock and blocks[0].upsamplers else getattr(
        blocks[0], "upsampler", None)
    if not walkable(upsampler, WanResample) or upsampler.mode != "upsample3d":
        return 1
    batch, _, _, height, width = x.shape
    frames = LATENT_STAGE_FRAMES * 2
    held = batch * blocks[1].resnets[-1].conv2.out_channels * frames * 4 * height * width * x.element_size()
    return 2 if held <= STAGE_HELD_BYTES else 1


def _latent_stage(
    decoder: nn.Module, x: torch.Tensor, feat_cache: list, channels_last_convs: bool, up_blocks: int = 1
) -> tuple[torch.Tensor, torch.Tensor | None, int]:
    """conv_in, the mid block and the residual blocks of the first ``up_blocks`` up blocks (the upsamplers and
    shortcuts between them included) on the later chunk x, with the cache slots the stock walk gives them (from
    0): (their output, the last such up block's input where its DupUp3D shortcut reads it, else None, the next
    cache slot).

    A chunk of several frames hands the attention's output on contiguous, as a one-frame chunk's is on CUDA:
    its own is frame-major, and the next residual block then took another path and left the one-frame bits
    (H200, session 30 E: every step fed the same contiguous input kept them). A one-frame chunk is stock's."""
    feat_idx = [0]
    latent_frames = x.shape[2]
    # conv_in's output goes to the mid block as a temporary (decode_chunk's one-slot list): a local would keep
    # it alive through the mid block.
    stage = [causal_conv(decoder.conv_in, x, feat_cache, feat_idx, channels_last_convs)]
    x = mid_block(
        decoder.mid_block, stage.pop(), feat_cache, feat_idx, channels_last_convs, contiguous_attention=latent_frames > 1
    )
    source = None
    for index, block in enumerate(decoder.up_blocks[:up_blocks]):
        if index:
            # Its output's norms are reduced per chunk of frames (norm_frames below): none written.
            x = up_block_tail(decoder.up_blocks[index - 1], x, source, feat_cache, feat_idx, False, False,
                              channels_last_convs, writes_norm=False)
        source = _shortcut_source(block, x)
        # Past the first up block each norm is reduced per latent frame's chunk; at the latent resolution the norms
        # of the whole group kept the one-frame bits (the check below), and one reduction per call is cheaper.
        norm_frames = x.shape[2] // latent_frames if index else 0
        stage = [x]
        del x
        x = residual_blocks(block.resnets, stage, feat_cache, feat_idx, channels_last_convs, norm_frames)
    return x, source, feat_idx[0]


def _frames(x: torch.Tensor | None, count: int) -> list[torch.Tensor | None]:
    """x cut into ``count`` chunks of equal frames, each contiguous as a one-latent-frame chunk's stage output is
    (x None: ``count`` Nones)."""
    if x is None:
        return [None] * count
    return frame_chunks(x, x.shape[2] // count)


def _latent_stage_by_frame(
    decoder: nn.Module, x: torch.Tensor, feat_cache: list, channels_last_convs: bool, up_blocks: int
) -> tuple[list[torch.Tensor], list[torch.Tensor | None], int]:
    """The stage on each frame of x in turn, as stock's chunk loop runs it: (outputs, up block inputs, next slot)."""
    outputs, sources, next_slot = [], [], 0
    for t in range(x.shape[2]):
        out, source, next_slot = _latent_stage(decoder, x[:, :, t:t + 1], feat_cache, channels_last_convs, up_blocks)
        outputs.append(out)
        sources.append(source)
    return outputs, sources, next_slot


def _same_bits_and_strides(a: object, b: object) -> bool:
    """Two tensors with the same values bit for bit and the same strides, or two Nones (no up block input kept);
    anything else: no. Meta tensors hold no values to compare: no (a meta decode runs one frame per call)."""
    if a is None and b is None:
        return True
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.is_meta or b.is_meta:
        return False
    return a.stride() == b.stride() and torch.equal(a, b)


class StageFrames(NamedTuple):
    """A group's stage results, one entry per latent frame, and where its later stages start."""

    outputs: list[torch.Tensor]
    sources: list[torch.Tensor | None]  # the input of the last up block run, where its DupUp3D shortcut reads it
    next_slot: int
    up_blocks: int  # up blocks whose residual blocks the stage ran


def _latent_stage_key(decoder: nn.Module, x: torch.Tensor, channels_last_convs: bool, up_blocks: int) -> tuple:
    """The check's key for the stage of chunk x through ``up_blocks`` up blocks."""
    block_types = tuple(type(block).__name__ for block in decoder.up_blocks[:up_blocks])
    return (_conv_geometry(decoder.conv_in, tuple(x.shape), x.dtype, x.device),
            tuple(decoder.mid_block.resnets[0].conv1.weight.shape), block_types, channels_last_convs)


def _latent_stage_group_frames(decoder: nn.Module, x: torch.Tensor, start: int, channels_last_convs: bool,
                               up_blocks: int) -> int:
    """Frames in the group of x's latent frames from ``start``: the first of LATENT_STAGE_FRAMES and
    LATENT_STAGE_SMALLER_FRAMES whose stage the check has not refused at every length; LATENT_STAGE_FRAMES where
    it refused them all, which then runs frame by frame, the groups staying where they were (a shorter last group is
    checked as its own geometry, once)."""
    for frames in (LATENT_STAGE_FRAMES, *LATENT_STAGE_SMALLER_FRAMES):
        group = x[:, :, start:start + frames]
        keys = [_latent_stage_key(decoder, group, channels_last_convs, blocks) for blocks in range(up_blocks, 0, -1)]
        if any(_latent_stage_verdicts.get(key) is not False for key in keys):
            return frames
    return LATENT_STAGE_FRAMES


def _latent_stage_frames(
    decoder: nn.Module, x: torch.Tensor, feat_cache: list, channels_last_convs: bool, up_blocks: int = 1
) -> StageFrames:
    """The stage on the frames of x, in one chunk where its check found that to give the one-frame chunks' outputs,
    up block inputs and caches (bits and strides), frame by frame otherwise and while it cannot check.

    The stage runs through ``up_blocks`` up blocks, or fewer where the check refused the longer stage (on the
    H200 Wan2.1's at 240x416 differs in the second up block while the shorter one keeps the bits, gpu-logs/session32
    C). The check runs both on the first chunk of each geometry and hands on the frame-by-frame results. A stage
    too small for the check to tell orders apart (LATENT_STAGE_MIN_ELEMENTS) runs frame by frame unchecked.
    """
    if x.shape[2] > 1 and decoder.conv_in.out_channels * x[0, 0].numel() >= LATENT_STAGE_MIN_ELEMENTS:
        for blocks in range(up_blocks, 0, -1):
            key = _latent_stage_key(decoder, x, channels_last_convs, blocks)
            verdict = _latent_stage_verdicts.get(key)
            if verdict is None and _can_check_now(x):
                with _latent_stage_check:
                    if _latent_stage_verdicts.get(key) is None:
                        return _checked_latent_stage(decoder, x, feat_cache, channels_last_convs, blocks, key)
                    verdict = _latent_stage_verdicts[key]
            if verdict:
                out, source, next_slot = _latent_stage(decoder, x, feat_cache, channels_last_convs, blocks)
                return StageFrames(_frames(out, x.shape[2]), _frames(source, x.shape[2]), next_slot, blocks)
            if verdict is None:
                break  # unchecked, and cannot check now
    return StageFrames(*_latent_stage_by_frame(decoder, x, feat_cache, channels_last_convs, up_blocks), up_blocks)


def _checked_latent_stage(
    decoder: nn.Module, x: torch.Tensor, feat_cache: list, channels_last_convs: bool, up_blocks: int, key: tuple
) -> StageFrames:
    """The check: the stage on x both ways, the verdict recorded under ``key``, the frame-by-frame results handed on."""
    batched_cache = list(feat_cache)
    out, source, _ = _latent_stage(decoder, x, batched_cache, channels_last_convs, up_blocks)
    batched = _frames(out, x.shape[2]) + _frames(source, x.shape[2])
    del out, source
    outputs, sources, next_slot = _latent_stage_by_frame(decoder, x, feat_cache, channels_last_convs, up_blocks)
    verdict = all(map(_same_bits_and_strides, batched + batched_cache[:next_slot],
                      outputs + sources + feat_cache[:next_slot]))
    _latent_stage_verdicts[key] = verdict
    if not verdict:
        logger.info("latent stage of %d frames per call not bit-exact for %s: one frame per call", x.shape[2], key)
    return StageFrames(outputs, sources, next_slot, up_blocks)


def batches_latent_stage(decoder: nn.Module) -> bool:
    """Whether decode_latents may run ``decoder``'s latent stage on several frames per call (BATCHED_LATENT_STAGE,
    an OmniWanDecoder without hooks or a replaced forward, whose first up block the walk can split, no autograd)."""
    return (
        BATCHED_LATENT_STAGE
        and LATENT_STAGE_FRAMES > 1
        and walkable(decoder, OmniWanDecoder)
        and walkable_up_block(decoder.up_blocks[0])
        and not torch.is_grad_enabled()
    )


_autocast_devices_logged: set[str] = set()
# The device types that have autocast here (torch.is_autocast_enabled raises for the others, such as meta), found
# once at import: a compiled graph's trace then only reads torch.is_autocast_enabled, which Dynamo guards on.
AUTOCAST_DEVICE_TYPES = frozenset(
    device_type
    for device_type in ("cpu", "cuda", "xpu", "mps", "hpu", "mtia", "maia", "xla", torch._C._get_privateuse1_backend_name())
    if torch.amp.is_autocast_available(device_type)
)
# Each device type's autocast dtype outside any autocast region: the walk sets a neutral autocast aside with it, so
# that the global state a compiled graph guards on is the one it was compiled under (no second graph).
_AUTOCAST_DEFAULT_DTYPES = {device_type: torch.get_autocast_dtype(device_type) for device_type in AUTOCAST_DEVICE_TYPES}


def _autocast_on(x: torch.Tensor) -> bool:
    device_type = x.device.type
    return device_type in AUTOCAST_DEVICE_TYPES and torch.is_autocast_enabled(device_type)


def autocast_leaves_decode_alone(modules: tuple[nn.Module, ...], x: torch.Tensor) -> bool:
    """Whether the autocast on for x's device type computes stock's decode of x by ``modules`` exactly as it runs
    without autocast, so that the walk, run with autocast set aside, gives stock's bits under it.

    So it is when autocast's dtype is x's and every parameter's, and the installed ``WanRMS_norm`` normalizes 16-bit
    x in fp32 and rounds (diffusers >= 0.38, NORM_IS_INSTALLED_DIFFUSERS): each op stock calls then gets inputs
    autocast leaves as they are. Its convs, 1x1 convs and attention (lower-precision list) already have them in
    autocast's dtype; its norm (``linalg_vector_norm``) and nearest upsample (fp32 list) get the fp32 copies stock
    makes itself; the rest (adds, SiLU, pads, cats) have no autocast kernel or cast nothing between equal dtypes.
    Before 0.38, ``F.normalize`` of 16-bit x returns an fp32 norm under CUDA autocast, which keeps the division,
    gamma and SiLU in fp32 (other bits): not left alone."""
    dtype = torch.get_autocast_dtype(x.device.type)
    return (
        x.dtype == dtype
        and NORM_IS_INSTALLED_DIFFUSERS.get(dtype, False)
        and all(parameter.dtype == dtype for module in modules for parameter in module.parameters())
    )


def neutral_autocast_set_aside(modules: tuple[nn.Module, ...], x: torch.Tensor) -> contextlib.AbstractContextManager:
    """Autocast switched off for x's device type where it is on and leaves the decode alone
    (autocast_leaves_decode_alone): the ops then see the dtypes stock computes in. Otherwise a context that does
    nothing (no autocast, or one that runs_stock_under_autocast then sends to stock's modules)."""
    if not _autocast_on(x) or not autocast_leaves_decode_alone(modules, x):
        return contextlib.nullcontext()
    device_type = x.device.type
    return torch.autocast(device_type, dtype=_AUTOCAST_DEFAULT_DTYPES[device_type], enabled=False)


def runs_stock_under_autocast(x: torch.Tensor) -> bool:
    """Whether autocast is on for x's device type, where the decoder runs stock's modules instead of the ops.

    The decoder's entries set autocast aside first where it leaves the decode alone (neutral_autocast_set_aside: the
    VAE and x in autocast's dtype), so the autocast met here changes stock's arithmetic, not only its dtypes: its
    convs cast fp32 inputs and weights to 16 bits, an fp32 gamma widens the norm's output, and before diffusers 0.38
    CUDA autocast keeps the norm, gamma and SiLU in fp32 until the next conv's cast. The ops reproduce stock's
    rounding without autocast, get no autocast casts of their own, and the conv checks' verdicts are kept per dtype
    a tensor carries. Stock's modules are exact under autocast by construction (and no faster); logged once per
    device type."""
    if not _autocast_on(x):
        return False
    device_type = x.device.type
    if device_type not in _autocast_devices_logged:
        _autocast_devices_logged.add(device_type)
        logger.warning(
            "torch_wanops: autocast to %s on %s changes stock's arithmetic for a %s decode: the Wan decoder runs "
            "stock diffusers' modules (exact under autocast, not faster). Autocast to the VAE's own dtype with "
            "diffusers >= 0.38, or no autocast, takes the fast path.", torch.get_autocast_dtype(device_type),
            device_type, x.dtype,
        )
    return True


def runs_stock_under_autograd(decoder: nn.Module, x: torch.Tensor, feat_cache: list[Any] | None) -> bool:
    """Whether autograd records chunk x's decode (grad mode on, and x, a cache or a decoder parameter requiring
    grad), where the decoder runs stock's modules: their backward is stock's, bit for bit, which the ops' autograd
    formulas are not (autograd adds a cached frame's gradient and its conv input's in another order). Logged once.
    Not inside a trace (compile_vae decides before tracing; a caller's own graph's gradients are Inductor's)."""
    if not torch.is_grad_enabled() or torch.compiler.is_compiling():
        return False
    recorded = (
        x.requires_grad
        or any(isinstance(entry, torch.Tensor) and entry.requires_grad for entry in feat_cache or ())
        or any(parameter.requires_grad for parameter in decoder.parameters())
    )
    if recorded:
        _log_stock_under_autograd()
    return recorded


@functools.cache
def _log_stock_under_autograd() -> None:
    logger.warning(
        "torch_wanops: autograd records this Wan decode (grad mode on, and the latents or the decoder's parameters "
        "require grad): the decoder runs stock diffusers' modules, whose gradients are stock's bit for bit, at "
        "stock's speed. Decode under torch.no_grad() or torch.inference_mode() for the fast path."
    )


def runs_stock_decoder(decoder: nn.Module, x: torch.Tensor, feat_cache: list[Any] | None) -> bool:
    """Whether OmniWanDecoder runs chunk x through ``WanDecoder3d.forward`` as diffusers has it: where that is not
    the code the walk mirrors (diffusers_code), under autocast (runs_stock_under_autocast) and where autograd
    records the decode (runs_stock_under_autograd)."""
    return (
        not runs_recorded_code(WanDecoder3d)
        or runs_stock_under_autocast(x)
        or runs_stock_under_autograd(decoder, x, feat_cache)
    )


class OmniWanDecoder(WanDecoder3d):
    """Drop-in ``WanDecoder3d`` whose forward runs through the wanops ops, bit for bit (stock's own forward where
    runs_stock_decoder says so)."""

    #: On CUDA in bf16, fp32 and fp16 (FP32_/FP16_CHANNELS_LAST_CONVS), feed the residual blocks' and the
    #: head's convs channels_last_3d input and add the bias while transposing the output back:
    #: the layout cuDNN computes in, without its two transposes. Measured bit-identical to
    #: stock on the H200 (whole decodes of both architectures), and checked once per conv
    #: geometry at run time (same cuDNN kernels, same bits: _channels_last_conv); set False
    #: to keep stock's conv layout everywhere.
    channels_last_convs: bool = True

    def forward(
        self,
        x: torch.Tensor,
        feat_cache: list[Any] | None = None,
        feat_idx: list[int] = [0],  # noqa: B006 - the stock signature, shared counter included
        first_chunk: bool = False,
    ) -> torch.Tensor:
        with neutral_autocast_set_aside((self,), x):
            return self.decode_chunk(x, feat_cache, feat_idx, first_chunk)

    def decode_chunk(
        self,
        x: torch.Tensor,
        feat_cache: list[Any] | None,
        feat_idx: list[int],
        first_chunk: bool,
        zero_rep: bool = False,
    ) -> torch.Tensor:
        """One latent chunk; ``zero_rep`` stores the "Rep" marker as zero frames (same output bits)."""
        if runs_stock_decoder(self, x, feat_cache):
            return WanDecoder3d.forward(self, x, feat_cache, feat_idx, first_chunk)
        # A channels-last decode (latents and conv weights channels_last_3d) was not
        # bit-exact with the lever on the H200: channels-last latents keep stock's layout.
        channels_last = self.channels_last_convs and not is_channels_last(x)
        # Each stage's output is handed to the next as a temporary through this one-slot list,
        # not kept in a local: a local would hold every up block's input through the whole
        # block (a full-size activation alive at the decode's memory peak).
        stage = [causal_conv(self.conv_in, x, feat_cache, feat_idx, channels_last)]
        stage.append(mid_block(self.mid_block, stage.pop(), feat_cache, feat_idx, channels_last))
        return self._up_blocks_and_head(stage, self.up_blocks, feat_cache, feat_idx, first_chunk, zero_rep, channels_last)

    def _up_blocks_and_head(
        self,
        stage: list[torch.Tensor],
        blocks: Any,
        feat_cache: FeatCache,
        feat_idx: list[int],
        first_chunk: bool,
        zero_rep: bool,
        channels_last: bool,
    ) -> torch.Tensor:
        """``blocks`` (up blocks) and the head on the one tensor in ``stage``, handed on through that list."""
        for block in blocks:
            stage.append(up_block(block, stage.pop(), feat_cache, feat_idx, first_chunk, zero_rep, channels_last))
        return norm_act_conv(
            self.norm_out, self.nonlinearity, None, self.conv_out, stage.pop(), feat_cache, feat_idx, channels_last
        )

    def decode_latents(self, x: torch.Tensor, feat_cache: list[Any]) -> torch.Tensor:
        """Every latent frame of x (post_quant_conv's output) as stock's chunk loop decodes them, frame 0 first
        (``first_chunk``), each later group of LATENT_STAGE_FRAMES frames (or, where the check refused that, of
        LATENT_STAGE_SMALLER_FRAMES) through the latent stage in one call where that is exact (BATCHED_LATENT_STAGE,
        _latent_stage_frames); ``feat_cache`` starts empty. Conv
        weights are copied channels-last once for all the frames (weight_copies_kept), conv2 epilogues hand
        their outputs' channel norms to the next norm (epilogue_norms_kept), and the ops dispatched below the
        autograd layer (dispatch_below_autograd)."""
        channels_last = self.channels_last_convs and not is_channels_last(x)
        up_blocks = stage_up_blocks(self, x)
        with weight_copies_kept(per_chunk_conv_weights(self, up_blocks)), epilogue_norms_kept(), \
                dispatch_below_autograd():
            outputs = [self.decode_chunk(x[:, :, :1], feat_cache, [0], True)]
            start = 1
            while start < x.shape[2]:
                frames = _latent_stage_group_frames(self, x, start, channels_last, up_blocks)
                stage = _latent_stage_frames(self, x[:, :, start:start + frames], feat_cache, channels_last, up_blocks)
                start += frames
                # Popped in frame order, so that each frame's stage output and up block input go with its later
                # stages instead of staying alive through the rest of the group.
                while stage.outputs:
                    outputs.append(self._decode_after_latent_stage(
                        stage.outputs.pop(0), stage.sources.pop(0), feat_cache, [stage.next_slot], channels_last,
                        stage.up_blocks,
                    ))
        return torch.cat(outputs, 2)

    def _decode_after_latent_stage(
        self,
        x: torch.Tensor,
        source: torch.Tensor | None,
        feat_cache: list[Any],
        feat_idx: list[int],
        channels_last: bool,
        up_blocks: int = 1,
    ) -> torch.Tensor:
        """A later chunk (not the first) from its stage output ``x`` (through ``up_blocks`` up blocks' residual
        blocks) and the input ``source`` of the last of them."""
        last = self.up_blocks[up_blocks - 1]
        stage = [up_block_tail(last, x, source, feat_cache, feat_idx, False, False, channels_last)]
        del x, source
        return self._up_blocks_and_head(stage, self.up_blocks[up_blocks:], feat_cache, feat_idx, False, False,
                                        channels_last)


class OmniAutoencoderKLWan(AutoencoderKLWan):
    """``AutoencoderKLWan`` whose decoder is an :class:`OmniWanDecoder`; same config, keys and bits."""

    # wraps() keeps the stock signature visible to diffusers' config machinery.
    @functools.wraps(AutoencoderKLWan.__init__)
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.decoder.__class__ = OmniWanDecoder

    def _decode(self, z: torch.Tensor, return_dict: bool = True) -> DecoderOutput | tuple[torch.Tensor]:
        return decode_batching_latent_stage(self, z, return_dict)


def decode_batching_latent_stage(
    vae: AutoencoderKLWan, z: torch.Tensor, return_dict: bool = True
) -> DecoderOutput | tuple[torch.Tensor]:
    """``AutoencoderKLWan._decode`` (diffusers 0.42) with the frame loop of OmniWanDecoder.decode_latents, which
    runs the latent stage on several frames per call where that is exact; stock's own ``_decode`` (tiling, a
    decoder it cannot walk, one frame, autograd, a device outside LATENT_STAGE_DEVICES, autocast that changes
    stock's arithmetic, an installed ``_decode`` that is not the code this mirrors) where batches_latent_stage says
    no. An autocast that leaves the decode alone is set aside (neutral_autocast_set_aside)."""
    with neutral_autocast_set_aside((vae.post_quant_conv, vae.decoder), z):
        return _decode_batching_latent_stage(vae, z, return_dict)


def _decode_batching_latent_stage(
    vae: AutoencoderKLWan, z: torch.Tensor, return_dict: bool
) -> DecoderOutput | tuple[torch.Tensor]:
    if vae.use_tiling or z.shape[2] < 2 or z.device.type not in LATENT_STAGE_DEVICES or not batches_latent_stage(
            vae.decoder) or runs_stock_under_autocast(z) or not runs_recorded_code(AutoencoderKLWan, "_decode"):
        return AutoencoderKLWan._decode(vae, z, return_dict=return_dict)
    vae.clear_cache()
    out = vae.decoder.decode_latents(vae.post_quant_conv(z), vae._feat_map)
    if vae.config.patch_size is not None:
        out = unpatchify(out, patch_size=vae.config.patch_size)
    out = torch.clamp(out, min=-1.0, max=1.0)
    vae.clear_cache()
    return DecoderOutput(sample=out) if return_dict else (out,)
