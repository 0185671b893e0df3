"""``wanops::rms_norm_cat_pad_5d``: a residual block's norm, SiLU and causal-conv input in one pass.

Spec (the reference below): ``cat_pad_5d(act(norm(x)), cache, padding, keep)``
where ``norm`` is diffusers' bias-free ``WanRMS_norm`` (channel-first, fp32
normalize for fp16/bf16) with ``gamma`` and ``scale``, and ``act`` is SiLU when
``silu``. The cache holds frames that were already normalized. The Triton path
computes the fp32 channel norm with ATen (so its summation order is ATen's) and
does everything else in the cat_pad_5d kernel.

With ``bias`` (a conv's, shape ``(C,)``) the op normalizes ``x + bias``, the add
rounded as stock's conv ``add_`` rounds it, without writing that sum: x can be a
conv's raw channels-last output. The channel norm of the sum then comes from
``channel_norm_kernel``, which adds in ATen's CUDA order; it is used for a geometry
only after a check on random values found it giving ATen's bits there
(``kernel_norm_is_atens``), and otherwise the sum is written out (stock's layout)
and reduced by ATen.

With ``tf32_out`` the padded output of an fp32 x is rounded to the nearest TF32 value, ties to
even, as cuDNN's TF32 convs round their input (so a conv of it gives the bits it gives of the
unrounded one); the next chunk's cache keeps stock's values. 16-bit values are on that grid
already. Autograd treats the rounding as the identity, as a TF32 conv's backward does.

With ``norm_frames`` (> 0, dividing x's frame count) x is several causal chunks of that many frames,
each normalized as stock normalizes a chunk on its own: its channel norm is reduced over the chunk's frames
alone, as a contiguous tensor of them. ATen's reduction order depends on the number of columns it reduces
(on the H200, 1024 channels at 10 frames of 60x104 add in another order than at 2: gpu-logs/session32), so a
decoder that runs several chunks per call keeps their bits this way. 0 (the default) is one chunk.

With ``x_norm`` ((B, 1, T, H, W) fp32) the op divides by that channel norm instead of reducing one
itself: the caller's, e.g. ``bias_add_contiguous_norm``'s, written by the pass that produced x. It must be
the norm the op would compute (of ``x + bias``, per chunk of ``norm_frames``) for the bits to be stock's.

Layout: both outputs are dense, in channels_last_3d when ``channels_last`` or when
x and the cache are both channels-last, contiguous otherwise. That is what the
stock expression gives for canonically laid-out contiguous or channels-last inputs.
"""

from __future__ import annotations

import functools
import logging
import math
import threading
from collections.abc import Callable, Sequence

import diffusers
import torch
import torch.nn.functional as F

from torch_wanops import _backend
from torch_wanops.ops._common import (
    define_op,
    is_channels_last,
    is_frame_major,
    require,
    require_channel_bias,
    require_same_placement,
    require_int,
    require_tensor,
    rounded_to_tf32,
)
from torch_wanops.ops.cat_pad_5d import (
    NormPrologue,
    _empty_next_cache,
    _keep_frames,
    cat_pad_5d_outputs_reference,
    check_cat_pad_5d_types,
    check_cat_pad_5d_values,
    dense_out_strides,
    launch_cat_pad_5d,
    padded_shape,
)
from torch_wanops.ops.wan_rms_norm import wan_rms_norm_reference

logger = logging.getLogger(__name__)

_kernels = _backend.kernel_module("cat_pad_5d")
_norm_kernels = _backend.kernel_module("channel_norm")
# SiLU's exp under the interpreter is numpy's: CPU keeps the reference (see _backend).
INTERPRETABLE = False


def check_rms_norm_cat_pad_5d_types(
    x: object, gamma: object, scale: object, silu: object, cache: object, padding: object,
    keep_cache_frames: object, channels_last: object, bias: object = None, tf32_out: object = False,
    norm_frames: object = 0, x_norm: object = None,
) -> None:
    """The Python-type half of the checks, run before the dispatcher sees the call."""
    check_cat_pad_5d_types(x, cache, padding, keep_cache_frames)
    require_int(norm_frames, "norm_frames")
    require_tensor(gamma, "gamma", ndim=4)
    require_tensor(bias, "bias", ndim=1, optional=True)
    require_tensor(x_norm, "x_norm", optional=True)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)):
        raise TypeError(f"scale must be a float, got {type(scale).__name__}")
    for value, name in ((silu, "silu"), (channels_last, "channels_last"), (tf32_out, "tf32_out")):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")


def check_rms_norm_cat_pad_5d_args(
    x: torch.Tensor, gamma: torch.Tensor, scale: float, silu: bool, cache: torch.Tensor | None,
    padding: Sequence[int], keep_cache_frames: int, channels_last: bool, bias: torch.Tensor | None = None,
    tf32_out: bool = False, norm_frames: int = 0, x_norm: torch.Tensor | None = None,
) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    check_rms_norm_cat_pad_5d_types(
        x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last, bias, tf32_out, norm_frames, x_norm
    )
    check_cat_pad_5d_values(x, cache, padding, keep_cache_frames)
    require_same_placement(x, "x", gamma, "gamma")
    require(
        tuple(gamma.shape) == (x.shape[1], 1, 1, 1),
        ValueError,
        lambda: f"gamma must have shape (C, 1, 1, 1) = ({x.shape[1]}, 1, 1, 1) for x {tuple(x.shape)}, "
        f"got {tuple(gamma.shape)}",
    )
    if bias is not None:
        require_channel_bias(x, bias)
    require(
        norm_frames == 0 or (norm_frames > 0 and x.shape[2] % norm_frames == 0),
        ValueError,
        lambda: f"norm_frames must be 0 or a positive divisor of x's {x.shape[2]} frames, got {norm_frames}",
    )
    if x_norm is not None:
        norm_shape = (x.shape[0], 1, *x.shape[2:])
        require(
            tuple(x_norm.shape) == norm_shape,
            ValueError,
            lambda: f"x_norm must have shape (B, 1, T, H, W) = {norm_shape} for x {tuple(x.shape)}, "
            f"got {tuple(x_norm.shape)}",
        )
        require(x_norm.dtype == torch.float32, TypeError, lambda: f"x_norm must be float32, got {x_norm.dtype}")
        require(x_norm.device == x.device, ValueError,
                lambda: f"x_norm must be on the device of x ({x.device}), got {x_norm.device}")


def rms_norm_silu_reference(x: torch.Tensor, gamma: torch.Tensor, scale: float, silu: bool,
                            x_norm: torch.Tensor | None = None) -> torch.Tensor:
    """Stock ``WanRMS_norm(channel_first=True, bias=False)`` followed by ``nn.SiLU`` when ``silu``; with ``x_norm``
    dividing by that channel norm, as ``F.normalize`` divides by the one it reduces."""
    needs_fp32 = x.dtype in (torch.float16, torch.bfloat16) or any(t in str(x.dtype) for t in ("float4_", "float8_"))
    wide = x.float() if needs_fp32 else x
    normalized = F.normalize(wide, dim=1) if x_norm is None else wide / x_norm.clamp_min(1e-12).expand_as(wide)
    y = normalized.to(x.dtype) * scale * gamma + 0.0
    return F.silu(y) if silu else y


def installed_norm_rounds_as_reference(dtype: torch.dtype) -> bool:
    """Whether the installed diffusers' ``WanRMS_norm`` gives ``rms_norm_silu_reference``'s bits in ``dtype``, on a
    fixed random input on the CPU. Since diffusers 0.38 it normalizes fp16 and bf16 in fp32 and rounds once, as the
    reference does; before, ``F.normalize`` ran in x's dtype, rounding the norm and the quotient to it. A norm that
    cannot run on the CPU in ``dtype`` counts as another: the decoder then runs diffusers' own."""
    generator = torch.Generator().manual_seed(0)
    x = (torch.randn(1, 16, 2, 8, 8, generator=generator) * 4).to(dtype)
    gamma = (torch.rand(16, 1, 1, 1, generator=generator) + 0.5).to(dtype)
    scale = 16**0.5
    try:
        with torch.no_grad():
            stock = wan_rms_norm_reference(x, gamma, scale, True, None, False)
            return torch.equal(stock, rms_norm_silu_reference(x, gamma, scale, False))
    except (RuntimeError, NotImplementedError) as error:
        logger.info("WanRMS_norm not checkable in %s on the CPU (%s): diffusers' own norm", dtype, error)
        return False


# Per dtype, whether this op's norm is the installed diffusers' (decoder._fusable_norm runs stock's norm where not).
NORM_IS_INSTALLED_DIFFUSERS = {
    dtype: installed_norm_rounds_as_reference(dtype)
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64)
}
if not all(NORM_IS_INSTALLED_DIFFUSERS.values()):
    logger.warning(
        "torch_wanops: diffusers %s's WanRMS_norm rounds otherwise than the fused norm (which follows diffusers >= "
        "0.38) in %s: the decoder's norms in those dtypes run diffusers' own code (exact, slower)",
        diffusers.__version__, ", ".join(str(dtype) for dtype, same in NORM_IS_INSTALLED_DIFFUSERS.items() if not same),
    )


def _out_memory_format(x: torch.Tensor, cache: torch.Tensor | None, channels_last: bool) -> torch.memory_format:
    """channels_last_3d when asked for, or when x and the cache are both channels-last (as torch.cat decides)."""
    if channels_last or (is_channels_last(x) and (cache is None or is_channels_last(cache))):
        return torch.channels_last_3d
    return torch.contiguous_format


def _out_strides(x, cache, padding, channels_last) -> tuple[int, ...]:
    return dense_out_strides(x, padding, _out_memory_format(x, cache, channels_last) == torch.channels_last_3d)


def _with_bias(x: torch.Tensor, bias: torch.Tensor | None) -> torch.Tensor:
    """Stock's conv output from a raw one: the bias added, rounded once to x's dtype, contiguous as cuDNN's
    NCDHW output is (the layout whose reduction order the norm has)."""
    return x if bias is None else (x + bias.view(1, -1, 1, 1, 1)).contiguous()


def _frame_slices(x: torch.Tensor, norm_frames: int) -> list[torch.Tensor]:
    """x's views of ``norm_frames`` frames each; [x] for 0 or all frames."""
    if not 0 < norm_frames < x.shape[2]:
        return [x]
    return [x[:, :, t:t + norm_frames] for t in range(0, x.shape[2], norm_frames)]


def frame_chunks(x: torch.Tensor, norm_frames: int) -> list[torch.Tensor]:
    """x's chunks of ``norm_frames`` frames, each contiguous as a chunk of its own is; [x] for 0 or all frames."""
    chunks = _frame_slices(x, norm_frames)
    return chunks if len(chunks) == 1 else [chunk.contiguous() for chunk in chunks]


def per_frame_chunk(fn: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, norm_frames: int) -> torch.Tensor:
    """``fn`` of each of x's frame_chunks on its own, concatenated along the frames (``fn(x)`` for one chunk)."""
    outputs = [fn(chunk) for chunk in frame_chunks(x, norm_frames)]
    return outputs[0] if len(outputs) == 1 else torch.cat(outputs, 2)


def _stock_outputs(x, gamma, scale, silu, cache, padding, keep_cache_frames, bias=None, norm_frames=0,
                   x_norm=None):
    if x_norm is None:
        normalized = per_frame_chunk(
            lambda chunk: rms_norm_silu_reference(_with_bias(chunk, bias), gamma, scale, silu), x, norm_frames
        )
    else:  # a norm per column, whatever chunks it was reduced in
        normalized = rms_norm_silu_reference(_with_bias(x, bias), gamma, scale, silu, x_norm)
    return cat_pad_5d_outputs_reference(normalized, cache, padding, keep_cache_frames)


def rms_norm_cat_pad_5d_reference(x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last, bias=None,
                                  tf32_out=False, norm_frames=0, x_norm=None):
    """The op's outputs from the stock ops, in the op's layout."""
    out, next_cache = _stock_outputs(x, gamma, scale, silu, cache, padding, keep_cache_frames, bias, norm_frames,
                                     x_norm)
    strides = _out_strides(x, cache, padding, channels_last)
    if out.stride() != strides:
        out = torch.empty_strided(out.shape, strides, dtype=out.dtype, device=out.device).copy_(out)
        next_cache = _empty_next_cache(out, x, next_cache.shape[2]).copy_(next_cache)
    if tf32_out and out.dtype == torch.float32:
        out = rounded_to_tf32(out)  # after the cache is taken: it keeps stock's values
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


def _is_frame_slice(x: torch.Tensor) -> bool:
    """Laid out as ``x[:, :, a:b]`` of a contiguous tensor, starting 16-byte aligned: each channel's frames,
    rows and columns dense, the channels further apart than the frames span."""
    _, channels, frames, height, width = x.shape
    plane = height * width
    return (
        x.stride()[2:] == (plane, width, 1)
        and x.stride(1) % plane == 0
        and x.stride(1) >= frames * plane
        and x.stride(0) == channels * x.stride(1)
        and x.storage_offset() * x.element_size() % 16 == 0
    )


def _upcast_in_reduction_exact(x: torch.Tensor) -> bool:
    """Layouts where reducing x with ``dtype=float32`` was measured bit-identical to reducing
    ``x.float()`` on the H200 (``benchmarks/probe_exactness.py``, the decoder's sizes): 16-bit x
    on CUDA, contiguous or frame-major ((B, T, C, H, W) in memory, as the upsamplers leave it), or a
    frame slice of a contiguous tensor (a chunk of ``norm_frames``; gpu-logs/session32)."""
    if x.dtype == torch.float32 or not x.is_cuda:
        return False
    return x.is_contiguous() or is_frame_major(x) or _is_frame_slice(x)


def _channel_norm(x: torch.Tensor, norm_frames: int = 0) -> torch.Tensor:
    """``F.normalize``'s fp32 channel norm of x, bit for bit, as a (B, 1, T, H, W) tensor; with ``norm_frames``
    that of each chunk of so many frames on its own (see the module docstring)."""
    if 0 < norm_frames < x.shape[2]:
        # A chunk of its own is contiguous. A slice reduces otherwise in general (on the CPU, and fp32, whose
        # x.float() is x itself), so it is copied unless measured to reduce as its copy does.
        return torch.cat([_channel_norm(c if _upcast_in_reduction_exact(c) else c.contiguous())
                          for c in _frame_slices(x, norm_frames)], 2)
    if _upcast_in_reduction_exact(x):
        # The bits of reducing x.float() without writing and reading the fp32 copy.
        return torch.linalg.vector_norm(x, dim=1, keepdim=True, dtype=torch.float32)
    return torch.linalg.vector_norm(x.float(), dim=1, keepdim=True)


# Reduce.cuh's launch constants for this reduction: 4 outputs per thread, blocks of 32 x 4 threads.
_OUTPUT_VECTOR, _BLOCK_WIDTH, _BLOCK_HEIGHT = 4, 32, 4
_MIN_VALUES_PER_THREAD, _MAX_VALUES_PER_THREAD = 16, 256


def aten_ctas_per_output(channels: int, columns: int, sms: int, threads_per_sm: int) -> int:
    """How many blocks ATen's CUDA reduction (``setReduceConfig``) splits each column's channels over, for a
    channel norm of ``columns`` outputs on a GPU of ``sms`` multiprocessors; 1: no split. Read off
    ``Reduce.cuh`` and checked against ATen's bits at Wan2.2's 1024-channel shapes (gpu-logs/session33/E)."""
    values_per_thread = -(-channels // _BLOCK_HEIGHT)
    grid = -(-(columns // _OUTPUT_VECTOR) // _BLOCK_WIDTH)
    target_grid = sms * (threads_per_sm // (_BLOCK_WIDTH * _BLOCK_HEIGHT))
    if values_per_thread < _MAX_VALUES_PER_THREAD or grid > target_grid:
        return 1
    return max(min(-(-target_grid // grid), -(-values_per_thread // _MIN_VALUES_PER_THREAD)),
               -(-values_per_thread // _MAX_VALUES_PER_THREAD))


def chunk_ctas(x: torch.Tensor, norm_frames: int) -> int:
    """ATen's block count for the channel norm of one of x's chunks of ``norm_frames`` frames (all of x for 0)
    on x's GPU; 1 off CUDA."""
    if not x.is_cuda:
        return 1
    batch, channels, frames, height, width = x.shape
    if 0 < norm_frames < frames:
        frames = norm_frames
    return aten_ctas_per_output(channels, batch * frames * height * width, *_multiprocessors_and_threads(x.device))


@functools.lru_cache(maxsize=None)
def _multiprocessors_and_threads(device: torch.device) -> tuple[int, int]:
    """(SM count, threads per SM) of a CUDA device: asked once, not on every norm's launch."""
    properties = torch.cuda.get_device_properties(device)
    return properties.multi_processor_count, properties.max_threads_per_multi_processor


def channel_norm_reference(x: torch.Tensor, bias: torch.Tensor | None = None, ctas: int = 1) -> torch.Tensor:
    """``channel_norm_kernel``'s spec from torch ops: the fp32 norm over channels of ``x + bias``, in its order.

    Block ``k`` (of ``ctas``) holds channels ``c`` with ``(c // 4) % ctas == k``: thread ``c % 4``,
    accumulator ``(c // (4 * ctas)) % 4``, each accumulator an fma chain over its channels in order (the
    square of a 16-bit value is exact in fp32, so ``+ v * v`` is that fma; for fp32 x it is taken in fp64,
    which can round twice where the kernel's fma rounds once). Each thread adds its accumulators in order,
    a block's threads combine as ``(t0 + t2) + (t1 + t3)``, and the block sums are added up as the last
    block's thread ``y`` adds blocks ``y, y + 4, ...``, combined by the same tree; the square root
    correctly rounded (through fp64: torch's CPU fp32 sqrt is not, in some lanes).
    """
    values = _with_bias(x, bias).float()
    channels = values.shape[1]
    column_count = values.shape[0] * math.prod(values.shape[2:])
    columns = values.movedim(1, 0).reshape(channels, column_count)
    zero = values.new_zeros(column_count)  # also the norm of no channels
    partial = {}
    for c in range(channels):
        lane = ((c // 4) % ctas, c % 4, (c // (4 * ctas)) % 4)  # (block, thread, accumulator)
        square_sum = partial.get(lane, zero)
        if x.dtype == torch.float32:
            partial[lane] = (square_sum.double() + columns[c].double() * columns[c].double()).float()
        else:
            partial[lane] = square_sum + columns[c] * columns[c]

    def tree(four: list[torch.Tensor]) -> torch.Tensor:
        return (four[0] + four[2]) + (four[1] + four[3])

    def thread_sum(k: int, y: int) -> torch.Tensor:
        a = [partial.get((k, y, i), zero) for i in range(4)]
        return ((a[0] + a[1]) + a[2]) + a[3]

    block_sums = [tree([thread_sum(k, y) for y in range(4)]) for k in range(ctas)]
    last_block = []
    for y in range(4):
        total = zero
        for block_sum in block_sums[y::4]:
            total = total + block_sum
        last_block.append(total)
    return torch.sqrt(tree(last_block).double()).float().reshape(values.shape[0], 1, *values.shape[2:])


def launch_channel_norm(
    x: torch.Tensor, bias: torch.Tensor | None = None, norm_frames: int = 0, ctas: int | None = None
) -> torch.Tensor:
    """``channel_norm_kernel`` on x in any layout: the (B, 1, T, H, W) fp32 norm of ``x + bias``, with
    ATen's block split for x's chunks of ``norm_frames`` frames on x's GPU unless ``ctas`` is given."""
    batch, channels, frames, height, width = x.shape
    out = torch.empty((batch, 1, frames, height, width), dtype=torch.float32, device=x.device)
    columns = out.numel()
    if columns == 0:
        return out
    if ctas is None:
        ctas = chunk_ctas(x, norm_frames)
    block, warps = _backend.channel_norm_tile(ctas)
    with _backend.device_of(x):
        _norm_kernels.channel_norm_kernel[(-(-columns // block),)](
            x, x if bias is None else bias, out, channels, frames, height, width, columns, ctas, *x.stride(),
            HAS_BIAS=bias is not None,
            INDEX64=_backend.index_needs_int64(x, out),
            BLOCK=block,
            num_warps=warps,
        )
    return out


# Whether channel_norm_kernel gives ATen's bits for a contiguous x of this geometry (what stock
# reduces), per (shape, dtype, device): checked once, one check at a time. ATen picks its order
# by shape (threads per column, vectorization, the block split of 1024 channels); a geometry
# whose order the kernel does not reproduce is refused.
_kernel_norm_verdicts: dict[tuple, bool] = {}
_kernel_norm_check = threading.Lock()
# A sum order that differs from ATen's shows in only a share of the columns of random values: a geometry of few
# columns is judged on several probes, up to this many columns in all (on the H200 a probe of 2 columns of
# 3 fp32 channels once matched by chance and the op then gave other bits, session 38).
NORM_PROBE_COLUMNS = 4096
MAX_NORM_PROBES = 256
# channel_norm_kernel taken for geometries ATen splits over blocks (1024 channels) too, in its split
# order; off, they are refused unchecked, and their sums written out for ATen (the order before session 34).
BLOCK_SPLIT_NORMS = True


def kernel_norm_is_atens(x: torch.Tensor, norm_frames: int = 0) -> bool:
    """Whether channel norms of x's geometry (of its chunks of ``norm_frames`` frames) may come from
    ``channel_norm_kernel`` (CUDA), whose order is per column, whatever the frame count.

    Judged on random values (a private generator), not x's: a sum order shows in a good share
    of the columns of random values, so on NORM_PROBE_COLUMNS columns at least (``norm_probe_count``
    probes of a small geometry). False, unjudged, inside a CUDA graph capture, where the comparison
    would synchronise.
    """
    shape = list(x.shape)
    if 0 < norm_frames < shape[2]:
        shape[2] = norm_frames
    if not BLOCK_SPLIT_NORMS and chunk_ctas(x, norm_frames) > 1:
        return False
    key = (tuple(shape), x.dtype, x.device)
    verdict = _kernel_norm_verdicts.get(key)
    if verdict is not None:
        return verdict
    if _norm_kernels is None or not x.is_cuda or torch.cuda.is_current_stream_capturing():
        return False
    with _kernel_norm_check, torch.no_grad():
        if key not in _kernel_norm_verdicts:
            _kernel_norm_verdicts[key] = _kernel_norm_matches_atens(shape, x.dtype, x.device)
        return _kernel_norm_verdicts[key]


def _kernel_norm_matches_atens(shape: list[int], dtype: torch.dtype, device: torch.device) -> bool:
    generator = torch.Generator(device).manual_seed(0)
    probe = torch.empty(shape, dtype=dtype, device=device)
    for _ in range(norm_probe_count(shape)):
        probe.normal_(generator=generator)
        if not torch.equal(launch_channel_norm(probe), _channel_norm(probe)):
            return False
    return True


def norm_probe_count(shape: list[int]) -> int:
    """How many random probes of this shape ``kernel_norm_is_atens`` compares: NORM_PROBE_COLUMNS columns in all,
    at most MAX_NORM_PROBES probes."""
    columns = shape[0] * shape[2] * shape[3] * shape[4]
    return 1 if columns == 0 else min(MAX_NORM_PROBES, -(-NORM_PROBE_COLUMNS // columns))


define_op(
    "wanops::rms_norm_cat_pad_5d",
    "(Tensor x, Tensor gamma, float scale, bool silu, Tensor? cache, SymInt[] padding, int keep_cache_frames=0, "
    "bool channels_last=False, Tensor? bias=None, bool tf32_out=False, int norm_frames=0, Tensor? x_norm=None) "
    "-> (Tensor, Tensor)",
)


@torch.library.impl("wanops::rms_norm_cat_pad_5d", "default")
def _rms_norm_cat_pad_5d_impl(x, gamma, scale, silu, cache, padding, keep_cache_frames=0, channels_last=False,
                              bias=None, tf32_out=False, norm_frames=0, x_norm=None):
    check_rms_norm_cat_pad_5d_args(
        x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last, bias, tf32_out, norm_frames, x_norm
    )
    if _backend.uses_kernel(x, _kernels, interpretable=INTERPRETABLE):
        strides = _out_strides(x, cache, padding, channels_last)
        if x_norm is not None:
            norm = x_norm
        elif bias is not None and not kernel_norm_is_atens(x, norm_frames):
            # Stock's conv output written out, for ATen to reduce.
            x, bias = torch.ops.wanops.bias_add_contiguous(x, bias, None), None
            norm = _channel_norm(x, norm_frames)
        else:
            norm = _channel_norm(x, norm_frames) if bias is None else launch_channel_norm(x, bias, norm_frames)
        prologue = NormPrologue(norm, gamma, float(scale), silu, _cuda_silu_table(x, silu), bias, tf32_out)
        return launch_cat_pad_5d(x, cache, padding, keep_cache_frames, strides, prologue)
    return rms_norm_cat_pad_5d_reference(
        x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last, bias, tf32_out, norm_frames, x_norm
    )


@torch.library.register_fake("wanops::rms_norm_cat_pad_5d")
def _rms_norm_cat_pad_5d_fake(x, gamma, scale, silu, cache, padding, keep_cache_frames=0, channels_last=False,
                              bias=None, tf32_out=False, norm_frames=0, x_norm=None):
    check_rms_norm_cat_pad_5d_args(
        x, gamma, scale, silu, cache, padding, keep_cache_frames, channels_last, bias, tf32_out, norm_frames, x_norm
    )
    memory_format = _out_memory_format(x, cache, channels_last)
    out = torch.empty(padded_shape(x, padding), dtype=x.dtype, device=x.device, memory_format=memory_format)
    return out, _empty_next_cache(out, x, _keep_frames(out.shape[2], keep_cache_frames))


def _setup_context(ctx, inputs, output):
    x, gamma, scale, silu, cache, padding, keep_cache_frames, _, bias, _, norm_frames, x_norm = inputs
    ctx.arguments = (scale, silu, list(padding), keep_cache_frames, norm_frames)
    ctx.optional = (cache is not None, bias is not None, x_norm is not None)
    ctx.save_for_backward(x, gamma, cache, bias, x_norm)


def _backward(ctx, grad_out, grad_next_cache):
    # The norm's gradient is ATen's: recompute the reference under autograd and ask it.
    x, gamma, cache, bias, x_norm = ctx.saved_tensors
    scale, silu, padding, keep_cache_frames, norm_frames = ctx.arguments
    given = [x, gamma] + [t for t, present in zip((cache, bias, x_norm), ctx.optional) if present]
    inputs = [t.detach().requires_grad_() for t in given]
    optional = iter(inputs[2:])
    cache, bias, x_norm = (next(optional) if present else None for present in ctx.optional)
    with torch.enable_grad():
        # Layout does not change gradient values: the plain stock expression will do.
        outputs = _stock_outputs(inputs[0], inputs[1], scale, silu, cache, padding, keep_cache_frames, bias,
                                 norm_frames, x_norm)
        pairs = [(o, g) for o, g in zip(outputs, (grad_out, grad_next_cache)) if g is not None and o.numel()]
        grads = iter(torch.autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True))
    grad_x, grad_gamma = next(grads), next(grads)
    grad_cache, grad_bias, grad_x_norm = (next(grads) if present else None for present in ctx.optional)
    return grad_x, grad_gamma, None, None, grad_cache, None, None, None, grad_bias, None, None, grad_x_norm


torch.library.register_autograd("wanops::rms_norm_cat_pad_5d", _backward, setup_context=_setup_context)
