import atexit
import os
import shutil
import tempfile

# A private Inductor cache per test session, removed at exit: the on-disk FX graph cache
# does not key on a custom op's fake, so a cache left by older code could replay stale
# output layouts.
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix="wanops-inductor-")
    atexit.register(shutil.rmtree, os.environ["TORCHINDUCTOR_CACHE_DIR"], ignore_errors=True)

import pytest  # noqa: E402
import torch  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import torch_wanops  # noqa: E402
from torch_wanops import _backend  # noqa: E402
from torch_wanops.ops._common import EXACT_STRIDES_TAG  # noqa: E402

settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "gpu",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gpu" if torch.cuda.is_available() else "ci"))

# Under pytest-xdist (the README's test command runs two workers) each worker takes one intra-op thread: two workers
# of two threads each on CI's two cores ran no faster than one process (session 61).
if os.environ.get("PYTEST_XDIST_WORKER"):
    torch.set_num_threads(1)

HAS_CUDA = torch.cuda.is_available()
# The dtypes the Triton kernels take; parametrize with ids=str so `-k bfloat16` selects by dtype.
DTYPES = (torch.float16, torch.bfloat16, torch.float32)

# Every place of PyTorch's fp32_precision settings (torch >= 2.9), parents before children: setting one
# sets those under it.
FP32_PRECISION_PLACES = (("generic", "all"), ("cuda", "all"), ("cuda", "conv"), ("cuda", "rnn"), ("cuda", "matmul"),
                         ("mkldnn", "all"), ("mkldnn", "conv"), ("mkldnn", "rnn"), ("mkldnn", "matmul"))


@pytest.fixture
def fp32_precision():
    """A setter of PyTorch's fp32_precision settings, ``set(backend, op, "ieee" | "tf32" | "none")``; all restored after."""
    if not hasattr(torch._C, "_get_fp32_precision_getter"):
        pytest.skip("this torch has no fp32_precision settings")
    saved = {}
    for place in FP32_PRECISION_PLACES:
        try:
            saved[place] = torch._C._get_fp32_precision_getter(*place)
        except RuntimeError:  # a place this torch does not have
            continue
    yield torch._C._set_fp32_precision_setter
    for place, value in saved.items():
        torch._C._set_fp32_precision_setter(*place, value)


@pytest.fixture
def walk_calls(monkeypatch):
    """One entry per causal conv the decoder walk runs: empty when every chunk ran stock's modules."""
    from torch_wanops import decoder as decoder_module

    walked = []
    causal_conv = decoder_module.causal_conv

    def counted(*args, **kwargs):
        walked.append(1)
        return causal_conv(*args, **kwargs)

    monkeypatch.setattr(decoder_module, "causal_conv", counted)
    return walked


# A compiled graph hands the ops their inputs' exact strides only where torch can tag the ops so (>= 2.8): older ones
# may lay an op's input out otherwise (torch 2.6 did), so compile_vae keeps decodes eager there.
exact_strides_graphs = pytest.mark.skipif(
    EXACT_STRIDES_TAG is None, reason="torch < 2.8: compiled graphs may hand the ops other strides than eager's")


def cuda(test):
    """Mark a test as needing CUDA (``-m cuda`` selects them); skipped without a GPU."""
    return pytest.mark.cuda(pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")(test))


def runs_on_cuda(item: pytest.Item) -> bool:
    """Whether a collected test runs on CUDA: marked ``cuda``, or parametrized with a CUDA device in its id."""
    return item.get_closest_marker("cuda") is not None or "cuda" in item.name.lower()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every CUDA test carries the marker, so ``-m cuda`` selects them all on the GPU: ``-k cuda`` alone misses
    # @cuda tests without "cuda" in their names (the random-shape decode loop of test_reliability went five
    # sessions unrun that way).
    for item in items:
        if runs_on_cuda(item):
            item.add_marker(pytest.mark.cuda)
    # The slow tests first, so that pytest-xdist's workers share them rather than one worker running them after
    # the other has finished (a stable sort: the order within each group stays the files' order).
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


# Where the Triton kernels can run in this process: CUDA, or CPU under TRITON_INTERPRET=1.
KERNEL_DEVICE = "cuda" if HAS_CUDA and not _backend.INTERPRETER else ("cpu" if _backend.INTERPRETER else None)
HAS_KERNELS = KERNEL_DEVICE is not None and _backend.kernel_module("cat_pad_5d") is not None

# (device, implementation) pairs that this machine can test.
IMPLEMENTATIONS = [("cpu", "reference")]
if HAS_CUDA:
    IMPLEMENTATIONS.append(("cuda", "reference"))
if HAS_KERNELS:
    IMPLEMENTATIONS.append((KERNEL_DEVICE, "triton"))


def impl_params():
    return pytest.mark.parametrize("device,impl", IMPLEMENTATIONS, ids=[f"{d}-{i}" for d, i in IMPLEMENTATIONS])


def run_impl(impl, fn, *args, **kwargs):
    """Run ``fn`` with the wanops ops pinned to ``impl`` ("reference" or "triton")."""
    if impl == "reference":
        with torch_wanops.reference_kernels():
            return fn(*args, **kwargs)
    return fn(*args, **kwargs)


def make_layout(tensor: torch.Tensor, layout: str) -> torch.Tensor:
    """``tensor``'s values in another memory layout (same logical shape)."""
    if layout == "contiguous":
        return tensor.contiguous()
    if layout == "channels_last":
        return tensor.contiguous(memory_format=torch.channels_last_3d)
    if layout == "permuted":  # stored as (B, T, C, H, W)
        return tensor.permute(0, 2, 1, 3, 4).contiguous().permute(0, 2, 1, 3, 4)
    if layout == "strided":  # every other element of a wider buffer along W
        wide = torch.zeros(*tensor.shape[:4], tensor.shape[4] * 2, dtype=tensor.dtype, device=tensor.device)
        view = wide[..., ::2]
        view.copy_(tensor)
        return view
    raise ValueError(layout)


LAYOUTS = ("contiguous", "channels_last", "permuted", "strided")


def random_tensor(shape, dtype, device, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator, dtype=torch.float32).to(dtype=dtype, device=device)


def skip_unless_free_gpu_memory(gib: int) -> None:
    free, _ = torch.cuda.mem_get_info()
    if free < gib * 2**30:
        pytest.skip(f"needs ~{gib} GiB of free GPU memory")


# DupUp3D geometries (wanops::dup_up3d_add, and bias_add_contiguous's DupUp3D residual).
def main_shape(source_shape, out_channels, factor_t, factor_s, drop_first):
    batch, _, frames, height, width = source_shape
    return (batch, out_channels, frames * factor_t - (factor_t - 1 if drop_first else 0), height * factor_s,
            width * factor_s)


@st.composite
def dup_cases(draw):
    factor_t = draw(st.sampled_from([1, 2]))
    factor_s = draw(st.sampled_from([1, 2]))
    factor = factor_t * factor_s * factor_s
    in_channels = draw(st.sampled_from([1, 2, 3, 4, 6, 8]))
    repeats = draw(st.sampled_from([r for r in (1, 2, 4, 8, 16) if in_channels * r % factor == 0]))
    out_channels = in_channels * repeats // factor
    batch = draw(st.integers(1, 2))
    frames = draw(st.integers(1, 3))
    height = draw(st.integers(1, 4))
    width = draw(st.integers(1, 5))
    drop_first = draw(st.booleans())
    dtype = draw(st.sampled_from(DTYPES))
    main_layout = draw(st.sampled_from(LAYOUTS))
    source_layout = draw(st.sampled_from(LAYOUTS))
    seed = draw(st.integers(0, 2**16))
    return (batch, in_channels, out_channels, frames, height, width, factor_t, factor_s, drop_first, dtype,
            main_layout, source_layout, seed)
