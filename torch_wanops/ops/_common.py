"""Argument checks and layout probes shared by the ops."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import torch


def require(condition: object, error: type[Exception], message: Callable[[], str]) -> None:
    """Raise ``error(message())`` unless ``condition``; a SymBool condition becomes a runtime check.

    The message is a callable so that passing checks (every call, in a hot path)
    never format it.
    """
    if isinstance(condition, torch.SymBool):
        torch._check_with(error, condition, message)
    elif not condition:
        raise error(message())


def require_tensor(value: object, name: str, ndim: int = 5, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, torch.Tensor):
        kind = "a torch.Tensor or None" if optional else "a torch.Tensor"
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")
    if value.dim() != ndim:
        raise ValueError(f"{name} must be a {ndim}-D (B, C, T, H, W) tensor, got shape {tuple(value.shape)}")


def require_int(value: object, name: str) -> None:
    # bool is an int subclass but never a meaningful count or factor here.
    if isinstance(value, bool) or not isinstance(value, (int, torch.SymInt)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")


def require_same_placement(a: torch.Tensor, a_name: str, b: torch.Tensor, b_name: str) -> None:
    if b.dtype != a.dtype:
        raise TypeError(f"{b_name} must have the dtype of {a_name} ({a.dtype}), got {b.dtype}")
    if b.device != a.device:
        raise ValueError(f"{b_name} must be on the device of {a_name} ({a.device}), got {b.device}")


def meta_twin(tensor: torch.Tensor | None) -> torch.Tensor | None:
    """A data-less tensor with ``tensor``'s sizes and strides, for running a reference on meta."""
    if tensor is None:
        return None
    return torch.empty_strided(tensor.shape, tensor.stride(), dtype=tensor.dtype, device="meta")


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


def is_channels_last(tensor: torch.Tensor) -> bool:
    """The ops' channels-last rule: more than one channel, and channels at stride 1.

    It also picks the kernels' innermost dimension (channels, else width).
    """
    return tensor.shape[1] > 1 and tensor.stride(1) == 1
