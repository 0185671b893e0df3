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

import torch_wanops  # noqa: E402
from torch_wanops import _backend  # noqa: E402

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


def cuda(test):
    """Mark a test as needing CUDA (``-m cuda`` selects them); skipped without a GPU."""
    return pytest.mark.cuda(pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")(test))


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
