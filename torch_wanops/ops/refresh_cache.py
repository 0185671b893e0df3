"""``wanops::refresh_cache``: a conv's next cache written over its old cache, in place.

Spec (the reference below): ``cache.copy_(next_cache)`` for two tensors of one shape, dtype,
device and strides that share no memory; ``cache`` is changed in place and nothing is returned.
Why it exists: a compiled chunk's graph takes the conv caches as inputs, and diffusers' cache
list keeps each old one alive until the graph returns, so a graph that returned new caches held
two sets at its peak (1.47 GiB more than eager at Wan2.1 bf16 480x832 on an H200). Through this
op the graph writes each new cache into the old one's storage as soon as it is made (Inductor
reinplaces the mutation on the graph input: no copy back, no buffer kept), and one new cache is
alive at a time, as in eager. The copy is ATen's on every device: the same bits.
"""

from __future__ import annotations

import torch

from torch_wanops.ops._common import define_op, require, require_same_placement, require_tensor


def check_refresh_cache_args(cache: object, next_cache: object) -> None:
    """Raise ``TypeError``/``ValueError`` naming the argument for any invalid call."""
    require_tensor(cache, "cache")
    require_tensor(next_cache, "next_cache")
    require_same_placement(cache, "cache", next_cache, "next_cache")
    require(
        cache.shape == next_cache.shape,
        ValueError,
        lambda: f"next_cache must have the shape of cache {tuple(cache.shape)}, got {tuple(next_cache.shape)}",
    )
    require(
        cache.stride() == next_cache.stride(),
        ValueError,
        lambda: f"next_cache must have the strides of cache {cache.stride()}, got {next_cache.stride()}",
    )


def _share_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether the storages of a and b overlap (disjoint views of one storage count)."""
    a_storage, b_storage = a.untyped_storage(), b.untyped_storage()
    a_start, b_start = a_storage.data_ptr(), b_storage.data_ptr()
    return a_start < b_start + b_storage.nbytes() and b_start < a_start + a_storage.nbytes()


def refresh_cache_reference(cache: torch.Tensor, next_cache: torch.Tensor) -> None:
    cache.copy_(next_cache)


define_op("wanops::refresh_cache", "(Tensor(a!) cache, Tensor next_cache) -> ()")


@torch.library.impl("wanops::refresh_cache", "default")
def _refresh_cache_impl(cache, next_cache):
    check_refresh_cache_args(cache, next_cache)
    require(not _share_storage(cache, next_cache), ValueError, lambda: "next_cache must not share memory with cache")
    refresh_cache_reference(cache, next_cache)


@torch.library.register_fake("wanops::refresh_cache")
def _refresh_cache_fake(cache, next_cache):
    check_refresh_cache_args(cache, next_cache)
