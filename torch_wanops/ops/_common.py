"""Argument checks and layout probes shared by the ops."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import torch


# Every op's output depends on its inputs' exact strides (the order its reductions add in, the layout it writes),
# so a compiled graph must hand each op its inputs laid out as eager would. torch >= 2.8 asks that of every custom
# op by default; older releases kept only the stride order, which a size-1 dimension leaves open (under torch 2.6
# Inductor handed a one-frame channels_last_3d tensor over contiguous). The tag holds whatever the default
# (``torch._functorch.config.custom_op_default_layout_constraint``); None where this torch lacks it.
EXACT_STRIDES_TAG: torch.Tag | None = getattr(torch.Tag, "needs_exact_strides", None)


# The qualified names of the ops define_op has defined, in order.
DEFINED_OPS: list[str] = []


def define_op(qualname: str, schema: str) -> None:
    """``torch.library.define`` of a wanops op, tagged to get its inputs' exact strides in compiled graphs."""
    torch.library.define(qualname, schema, tags=() if EXACT_STRIDES_TAG is None else (EXACT_STRIDES_TAG,))
    DEFINED_OPS.append(qualname)


def require(condition: object, error: type[Exception], message: Callable[[], str]) -> None:
    """Raise ``error(message())`` unless ``condition``; a SymBool condition becomes a runtime check.

    The message is a callable so that passing checks (every call, in a hot path)
    never format it.
    """
    if isinstance(condition, torch.SymBool):
        torch._check_with(error, condition, message)
    elif not condition:
        raise error(message())


def require_tensor(value: object, name: str, ndim: int | tuple[int, ...] = 5, optional: bool = False) -> None:
    """Raise naming ``name`` unless ``value`` is a tensor of ``ndim`` dimensions (one of them, for a tuple)."""
    if value is None and optional:
        return
    if not isinstance(value, torch.Tensor):
        kind = "a torch.Tensor or None" if optional else "a torch.Tensor"
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")
    allowed = ndim if isinstance(ndim, tuple) else (ndim,)
    if value.dim() not in allowed:
        layout = " (B, C, T, H, W)" if allowed == (5,) else ""
        dims = " or ".join(f"{n}-D" for n in allowed)
        raise ValueError(f"{name} must be a {dims}{layout} tensor, got shape {tuple(value.shape)}")


def require_int(value: object, name: str) -> None:
    # bool is an int subclass but never a meaningful count or factor here. (A plain int, by far the
    # commonest, is settled by the first test: these checks run on every call.)
    if type(value) is not int and (isinstance(value, bool) or not isinstance(value, (int, torch.SymInt))):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")


def require_same_placement(a: torch.Tensor, a_name: str, b: torch.Tensor, b_name: str) -> None:
    if b.dtype != a.dtype:
        raise TypeError(f"{b_name} must have the dtype of {a_name} ({a.dtype}), got {b.dtype}")
    if b.device != a.device:
        raise ValueError(f"{b_name} must be on the device of {a_name} ({a.device}), got {b.device}")


def require_channel_bias(x: torch.Tensor, bias: torch.Tensor, name: str = "bias") -> None:
    """``bias`` (called ``name``) is a conv's for x: x's dtype and device, one entry per channel."""
    require_same_placement(x, "x", bias, name)
    require(
        bias.shape[0] == x.shape[1],
        ValueError,
        lambda: f"{name} must have one entry per channel of x ({x.shape[1]}), got {bias.shape[0]}",
    )


# The low significand bits of an fp32 value that TF32 drops (it keeps 10 of the 23).
TF32_DROPPED_BITS = 13
_TF32_DROPPED_MASK = (1 << TF32_DROPPED_BITS) - 1


def rounded_to_tf32(values: torch.Tensor) -> torch.Tensor:
    """A new fp32 tensor of ``values`` rounded to the nearest TF32 value, ties to even, in values' layout.

    ``csrc_triton.rounding.round_significand`` in torch ops: NaN also becomes the NaN with every
    significand bit set, which TF32 keeps a NaN.
    """
    bits = values.view(torch.int32)
    rounded = (bits + (_TF32_DROPPED_MASK >> 1) + ((bits >> TF32_DROPPED_BITS) & 1)) & ~_TF32_DROPPED_MASK
    return rounded.view(torch.float32).masked_fill_(values.isnan(), float("nan"))


def truncated_to_tf32(values: torch.Tensor) -> torch.Tensor:
    """A new fp32 tensor of ``values`` with the bits TF32 drops cleared: how the tensor cores read fp32 bits.

    The same values for inputs already on the TF32 grid; a NaN whose payload lies in those bits
    becomes an infinity.
    """
    return (values.view(torch.int32) & ~_TF32_DROPPED_MASK).view(torch.float32)


def channels_last_format(tensor: torch.Tensor) -> torch.memory_format:
    """The channels-last memory format of a 5-D (channels_last_3d) or 4-D (channels_last) tensor."""
    return torch.channels_last_3d if tensor.dim() == 5 else torch.channels_last


def geometry(tensor: torch.Tensor | None) -> tuple | None:
    return None if tensor is None else (tuple(tensor.shape), tuple(tensor.stride()), tensor.dtype)


@functools.lru_cache(maxsize=4096)
def _probe_strides(reference: Callable, tensor_geometries: tuple, extra: tuple) -> tuple[int, ...]:
    twins = [
        None if g is None else torch.empty_strided(g[0], g[1], dtype=g[2], device="meta") for g in tensor_geometries
    ]
    return tuple(reference(*twins, *extra).stride())


def reference_strides(reference: Callable, tensors: Sequence[torch.Tensor | None], extra: tuple) -> tuple[int, ...]:
    """Strides of ``reference(*tensors, *extra)``, computed on meta twins and cached by geometry.

    The Triton launchers allocate their output with these strides, so the output
    layout is the reference expression's by construction, for any input views.
    """
    return _probe_strides(reference, tuple(geometry(t) for t in tensors), extra)


def aten_suggests_channels_last(tensor: torch.Tensor) -> bool:
    """Whether ATen's ``suggest_memory_format()`` of this 4-D or 5-D tensor is channels-last: the layout ATen's
    convolutions pick for it (with a contiguous weight), which is not the same as ``is_contiguous(memory_format=...)``.

    c10's ``is_channels_last_strides_2d_s4``/``3d_s5``: walking channels, then the spatial dims innermost first,
    then the batch, each stride at least the span of the ones before; a batch stride equal to the channels' one,
    or a zero channel stride, is contiguous. So a one-element batch whose stride is smaller than the rest (a
    view of frames stored inside each pixel) counts as contiguous, though it is dense channels-last.
    """
    shape, strides = tensor.shape, tensor.stride()
    if tensor.dim() not in (4, 5) or strides[1] == 0:
        return False
    least = 0
    for d in (1, *range(tensor.dim() - 1, 1, -1), 0):
        if shape[d] == 0 or strides[d] < least or (d == 0 and least == strides[1]):
            return False
        least = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def is_channels_last(tensor: torch.Tensor) -> bool:
    """The ops' channels-last rule: more than one channel, and channels at stride 1.

    It also picks the kernels' innermost dimension (channels, else width).
    """
    return tensor.shape[1] > 1 and tensor.stride(1) == 1


def is_frame_major(tensor: torch.Tensor) -> bool:
    """Stored (B, T, C, H, W) exactly, as WanResample's final permute leaves its 5-D output."""
    return tensor.stride() == dense_strides(tensor.shape, (4, 3, 1, 2, 0))


def _is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _is_non_overlapping_and_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    expected = 1
    for d in sorted((d for d in range(len(shape)) if shape[d] != 1), key=lambda d: strides[d]):
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def dense_strides(shape: Sequence[int], order: Sequence[int]) -> tuple[int, ...]:
    """Dense strides with dimensions laid out innermost first in ``order``."""
    strides = [0] * len(shape)
    step = 1
    for d in order:
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def elementwise_output_strides(shape: Sequence[int], *operands: Sequence[int]) -> tuple[int, ...]:
    """Strides ATen's TensorIterator gives the output of an elementwise op on same-shape operands.

    The meta device computes these in Python and differs from CPU/CUDA when
    size-1 dimensions make the order ambiguous, so the launchers and fakes use
    this port of TensorIterator's fast setup and ``reorder_dimensions`` instead.
    """
    ndim = len(shape)
    if all(_is_contiguous(shape, strides) for strides in operands):
        return dense_strides(shape, range(ndim - 1, -1, -1))
    if all(_is_non_overlapping_and_dense(shape, strides) for strides in operands) and all(
        tuple(strides) == tuple(operands[0]) for strides in operands
    ):
        return tuple(operands[0])

    def should_swap(dim0: int, dim1: int) -> int:
        for strides in operands:
            stride0, stride1 = strides[dim0], strides[dim1]
            if stride0 == 0 or stride1 == 0:
                continue
            if stride0 < stride1:
                return -1
            if stride0 > stride1:
                return 1
            if shape[dim0] > shape[dim1]:
                return 1
        return 0

    perm = list(range(ndim - 1, -1, -1))  # innermost first, as TensorIterator orders them
    for i in range(1, ndim):
        dim1 = i
        for dim0 in range(i - 1, -1, -1):
            comparison = should_swap(perm[dim0], perm[dim1])
            if comparison > 0:
                perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
                dim1 = dim0
            elif comparison < 0:
                break
    return dense_strides(shape, perm)
