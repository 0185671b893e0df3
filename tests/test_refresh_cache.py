"""wanops::refresh_cache: a next cache copied over the old one in place, eager and in compiled graphs."""

import re

import pytest
import torch
from conftest import DTYPES, HAS_CUDA, LAYOUTS, make_layout, random_tensor
from hypothesis import given
from hypothesis import strategies as st
from torch._inductor.utils import run_and_get_code

from torch_wanops.ops import refresh_cache

DEVICES = ["cpu"] + ["cuda"] * HAS_CUDA


def old_and_next(shape, dtype, device, layout, seed):
    """An old cache and a next cache of one layout (the same strides), different values."""
    next_cache = make_layout(random_tensor(shape, dtype, device, seed), layout)
    cache = make_layout(random_tensor(shape, dtype, device, seed + 1), layout)
    assert cache.stride() == next_cache.stride()
    return cache, next_cache


@pytest.mark.parametrize("device", DEVICES)
@given(
    shape=st.tuples(st.integers(1, 2), st.integers(1, 9), st.integers(1, 3), st.integers(1, 6), st.integers(1, 7)),
    dtype=st.sampled_from(DTYPES),
    layout=st.sampled_from(LAYOUTS),
    seed=st.integers(0, 2**16),
)
def test_writes_the_next_cache_over_the_old_one_in_place(device, shape, dtype, layout, seed):
    cache, next_cache = old_and_next(shape, dtype, device, layout, seed)
    storage, strides, expected = cache.untyped_storage().data_ptr(), cache.stride(), next_cache.clone()
    assert refresh_cache(cache, next_cache) is None
    assert torch.equal(cache, expected) and torch.equal(next_cache, expected)
    assert cache.untyped_storage().data_ptr() == storage and cache.stride() == strides


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_opcheck(device, layout):
    cache, next_cache = old_and_next((2, 5, 2, 3, 4), torch.float32, device, layout, 0)
    torch.library.opcheck(torch.ops.wanops.refresh_cache, (cache, next_cache))


@pytest.mark.parametrize("device", DEVICES)
def test_a_compiled_graph_writes_into_its_input(device):
    """Inductor runs the op on the graph input itself: no copy back, no buffer for the new cache
    beyond the one the graph computes (what keeps a compiled chunk to one set of caches)."""

    def step(cache, x):
        next_cache = x[:, :, -2:] * 2
        refresh_cache(cache, next_cache)
        return x + 1

    cache, x = torch.zeros(1, 4, 2, 3, 5, device=device), torch.randn(1, 4, 3, 3, 5, device=device)
    storage = cache.untyped_storage().data_ptr()
    torch._dynamo.reset()
    out, (code, *_) = run_and_get_code(torch.compile(step, fullgraph=True), cache, x)
    assert torch.equal(cache, x[:, :, -2:] * 2) and torch.equal(out, x + 1)
    assert cache.untyped_storage().data_ptr() == storage
    calls = re.findall(r"torch\.ops\.wanops\.refresh_cache\.default\((\w+), (\w+)\)", code)
    assert len(calls) == 1 and calls[0][0].startswith("arg"), calls  # called on a graph input
    assert "copy_(" not in code


@pytest.mark.parametrize("cache,next_cache,error,message", [
    ("cache", torch.zeros(1, 1, 1, 1, 1), TypeError, "cache must be a torch.Tensor"),
    (torch.zeros(1, 1, 1, 1, 1), None, TypeError, "next_cache must be a torch.Tensor"),
    (torch.zeros(1, 1, 1, 1), torch.zeros(1, 1, 1, 1), ValueError, "cache must be a 5-D"),
    (torch.zeros(1, 2, 2, 3, 3), torch.zeros(1, 2, 1, 3, 3), ValueError, "next_cache must have the shape of cache"),
    (torch.zeros(1, 2, 2, 3, 3), torch.zeros(1, 2, 2, 3, 3, dtype=torch.float16), TypeError,
     "next_cache must have the dtype of cache"),
    (torch.zeros(1, 2, 2, 3, 3), torch.zeros(1, 2, 2, 3, 3).contiguous(memory_format=torch.channels_last_3d),
     ValueError, "next_cache must have the strides of cache"),
])
def test_invalid_arguments_name_the_argument(cache, next_cache, error, message):
    with pytest.raises(error, match=message):
        refresh_cache(cache, next_cache)


def test_next_cache_sharing_memory_with_cache_is_refused():
    frames = torch.zeros(1, 2, 4, 3, 3)
    with pytest.raises(ValueError, match="next_cache must not share memory with cache"):
        refresh_cache(frames[:, :, :2], frames[:, :, 2:])
