"""Streams, devices, threads and repeated decodes: results stay exact and memory does not grow."""

import threading

import pytest
import torch
from conftest import HAS_CUDA, cuda
from test_decoder import assert_same_decode, latents, pair

import torch_wanops
from torch_wanops.ops import bias_add_contiguous, cat_pad_5d, dup_up3d_add, rms_norm_cat_pad_5d
from torch_wanops.ops.bias_add_contiguous import bias_add_contiguous_reference
from torch_wanops.ops.cat_pad_5d import cat_pad_5d_reference
from torch_wanops.ops.dup_up3d_add import dup_up3d_add_reference

DEVICES = ["cpu"] + (["cuda"] if HAS_CUDA else [])


@pytest.mark.parametrize("device", DEVICES)
def test_two_threads_decode_two_models_at_once(device):
    # The Triton interpreter keeps global state and is not thread-safe; on CPU under
    # TRITON_INTERPRET the threads use the reference kernels (compiled Triton on CUDA is).
    impl = "reference" if device == "cpu" else "triton"
    models = {arch: pair(arch, device=device) for arch in ("wan2.1-tiny", "wan2.2-tiny")}
    errors = []
    barrier = threading.Barrier(len(models))

    def decode(arch):
        try:
            stock, omni = models[arch]
            z = latents(arch, torch.float32, device, frames=3)
            barrier.wait()
            for _ in range(2):
                assert_same_decode(stock, omni, z, impl)
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=decode, args=(arch,)) for arch in models]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


@cuda
def test_ops_on_a_side_stream_follow_stream_semantics():
    side = torch.cuda.Stream()
    x = torch.randn(1, 96, 4, 240, 416, device="cuda", dtype=torch.bfloat16)
    cache = torch.randn(1, 96, 2, 240, 416, device="cuda", dtype=torch.bfloat16)
    source = torch.randn(1, 64, 2, 60, 104, device="cuda", dtype=torch.bfloat16)
    main = torch.randn(1, 64, 3, 120, 208, device="cuda", dtype=torch.bfloat16)
    gamma = torch.randn(96, 1, 1, 1, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(64, device="cuda", dtype=torch.bfloat16)
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        # Inputs produced on the side stream right before the ops: a launch on the
        # default stream would race with these writes.
        x.mul_(2)
        main.add_(1)
        padded, kept = cat_pad_5d(x, cache, (1, 1, 1, 1, 2, 0), 2)
        summed = dup_up3d_add(main, source, 2, 2, 8, True)
        normed, _ = rms_norm_cat_pad_5d(x, gamma, 96**0.5, True, cache, (1, 1, 1, 1, 2, 0), 2, True)
        biased = bias_add_contiguous(main.contiguous(memory_format=torch.channels_last_3d), bias)
    torch.cuda.current_stream().wait_stream(side)
    for tensor in (padded, kept, summed, normed, biased):
        tensor.record_stream(torch.cuda.current_stream())
    assert torch.equal(padded, cat_pad_5d_reference(x, cache, (1, 1, 1, 1, 2, 0)))
    assert torch.equal(kept, x[:, :, -2:])
    assert torch.equal(summed, dup_up3d_add_reference(main, source, 2, 2, 8, True))
    with torch_wanops.reference_kernels():
        expected, _ = rms_norm_cat_pad_5d(x, gamma, 96**0.5, True, cache, (1, 1, 1, 1, 2, 0), 2, True)
    assert torch.equal(normed, expected)
    assert torch.equal(biased, bias_add_contiguous_reference(main, bias))


@cuda
def test_two_streams_concurrently():
    streams = [torch.cuda.Stream() for _ in range(2)]
    inputs = [torch.randn(1, 192, 4, 240, 416, device="cuda", dtype=torch.bfloat16) for _ in streams]
    outputs = []
    for stream, x in zip(streams, inputs):
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            outputs.append(cat_pad_5d(x, None, (1, 1, 1, 1, 2, 0), 2))
    torch.cuda.synchronize()
    for x, (padded, kept) in zip(inputs, outputs):
        assert torch.equal(padded, cat_pad_5d_reference(x, None, (1, 1, 1, 1, 2, 0)))
        assert torch.equal(kept, x[:, :, -2:])


@cuda
@pytest.mark.skipif(not HAS_CUDA or torch.cuda.device_count() < 2, reason="needs two CUDA devices")
def test_kernels_launch_on_the_tensors_device():
    x = torch.randn(1, 64, 2, 60, 104, device="cuda:1", dtype=torch.bfloat16)
    source = torch.randn(1, 64, 1, 30, 52, device="cuda:1", dtype=torch.bfloat16)
    main = torch.randn(1, 64, 1, 60, 104, device="cuda:1", dtype=torch.bfloat16)
    gamma = torch.randn(64, 1, 1, 1, device="cuda:1", dtype=torch.bfloat16)
    bias = torch.randn(64, device="cuda:1", dtype=torch.bfloat16)
    stock, omni = pair("wan2.1-tiny", device="cuda:1")
    z = latents("wan2.1-tiny", torch.float32, "cuda:1", frames=2)
    with torch.cuda.device(0):  # cuda:0 current: every launch must still land on cuda:1
        padded, kept = cat_pad_5d(x, None, (1, 1, 1, 1, 2, 0), 2)
        summed = dup_up3d_add(main, source, 2, 2, 8, True)
        normed, _ = rms_norm_cat_pad_5d(x, gamma, 64**0.5, True, None, (1, 1, 1, 1, 2, 0), 2, True)
        biased = bias_add_contiguous(main.contiguous(memory_format=torch.channels_last_3d), bias)
        assert_same_decode(stock, omni, z)
        assert_same_decode(stock.to(torch.bfloat16), omni.to(torch.bfloat16), z.to(torch.bfloat16))
    for tensor in (padded, kept, summed, normed, biased):
        assert tensor.device == x.device
    assert torch.equal(padded, cat_pad_5d_reference(x, None, (1, 1, 1, 1, 2, 0)))
    assert torch.equal(summed, dup_up3d_add_reference(main, source, 2, 2, 8, True))
    with torch_wanops.reference_kernels():
        expected, _ = rms_norm_cat_pad_5d(x, gamma, 64**0.5, True, None, (1, 1, 1, 1, 2, 0), 2, True)
    assert torch.equal(normed, expected)
    assert torch.equal(biased, bias_add_contiguous_reference(main, bias))


@cuda
def test_many_decodes_of_random_shapes_do_not_grow_memory():
    generator = torch.Generator().manual_seed(0)
    models = {arch: pair(arch, device="cuda") for arch in ("wan2.1-tiny", "wan2.2-tiny")}
    shapes = [(arch, frames, height, width) for arch in models for frames in (1, 2, 3) for height, width in ((4, 6), (5, 3))]
    settled = {}
    for step in range(1000):
        arch, frames, height, width = shapes[int(torch.randint(len(shapes), (1,), generator=generator))]
        stock, omni = models[arch]
        z = latents(arch, torch.float32, "cuda", frames=frames, height=height, width=width, seed=step)
        assert_same_decode(stock, omni, z)
        del z
        allocated = torch.cuda.memory_allocated()
        key = (arch, frames, height, width)
        if key in settled:
            assert allocated <= settled[key], f"allocated memory grew at step {step} for {key}"
        else:
            settled[key] = allocated


def test_without_triton_the_ops_take_the_reference(monkeypatch):
    import importlib

    from torch_wanops import _backend

    # What an install without triton looks like to the ops: no kernel modules.
    for name in ("cat_pad_5d", "dup_up3d_add", "rms_norm_cat_pad_5d", "bias_add_contiguous", "upsample_nearest_2x"):
        monkeypatch.setattr(importlib.import_module(f"torch_wanops.ops.{name}"), "_kernels", None)
    for device in DEVICES:
        assert _backend.implementation_name(device, torch.bfloat16, None) == "reference"
        stock, omni = pair("wan2.2-tiny", torch.bfloat16, device)
        assert_same_decode(stock, omni, latents("wan2.2-tiny", torch.bfloat16, device, frames=2))


def test_int64_indexing_follows_the_span_not_the_storage():
    from torch_wanops import _backend

    # Meta tensors: the sizes are real, nothing is allocated.
    storage = torch.empty(2**32, device="meta", dtype=torch.bfloat16)
    assert not _backend.index_needs_int64(torch.empty(3, 5, device="meta"))
    assert not _backend.index_needs_int64(storage[:4])  # a small view of a large storage
    assert not _backend.index_needs_int64(storage[2**32 - 8:])  # far from the storage's start, a small span
    assert _backend.index_needs_int64(storage[:: 2**31])  # two elements 2**31 apart
    assert _backend.index_needs_int64(storage[: 2**31])
    assert _backend.index_needs_int64(torch.empty(1, device="meta").expand(2**31))  # numel alone
    assert not _backend.index_needs_int64(torch.empty(1, device="meta").expand(2**31 - 2))
