"""The fused norm follows the installed diffusers' WanRMS_norm, or the decoder runs diffusers' own norm.

diffusers 0.38 made WanRMS_norm normalize fp16 and bf16 inputs in fp32 and round once; before (0.35-0.37),
F.normalize ran in the input's dtype. rms_norm_cat_pad_5d reproduces the newer arithmetic, so under an older
diffusers the decoder must not fuse the 16-bit norms (NORM_IS_INSTALLED_DIFFUSERS). Here the older forward is
put in place of the installed one.
"""

import importlib

import diffusers
import pytest
import torch
import torch.nn.functional as F
from diffusers.models.autoencoders.autoencoder_kl_wan import WanRMS_norm
from test_decoder import latents, pair

from torch_wanops import decoder as decoder_module

norm_op = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def normalized_in_own_dtype(self, x):
    """WanRMS_norm's forward before diffusers 0.38: F.normalize in x's dtype."""
    return F.normalize(x, dim=(1 if self.channel_first else -1)) * self.scale * self.gamma + self.bias


@pytest.fixture
def diffusers_before_0_38(monkeypatch):
    monkeypatch.setattr(WanRMS_norm, "forward", normalized_in_own_dtype)
    monkeypatch.setattr(decoder_module, "NORM_IS_INSTALLED_DIFFUSERS",
                        {dtype: norm_op.installed_norm_rounds_as_reference(dtype) for dtype in DTYPES})


def test_the_installed_norm_is_told_by_its_version():
    """From diffusers 0.38 every dtype fuses (CI installs 0.42.1); before, fp16 and bf16 do not."""
    newer = tuple(int(part) for part in diffusers.__version__.split(".")[:2]) >= (0, 38)
    assert norm_op.NORM_IS_INSTALLED_DIFFUSERS == {
        torch.float16: newer, torch.bfloat16: newer, torch.float32: True, torch.float64: True
    }
    assert decoder_module.NORM_IS_INSTALLED_DIFFUSERS is norm_op.NORM_IS_INSTALLED_DIFFUSERS


def test_the_check_tells_the_older_norm_apart(diffusers_before_0_38):
    # The two forwards differ only where the 16-bit norm and quotient are rounded; fp32 and fp64 agree.
    assert decoder_module.NORM_IS_INSTALLED_DIFFUSERS == {
        torch.float16: False, torch.bfloat16: False, torch.float32: True, torch.float64: True
    }


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
@pytest.mark.parametrize("arch", ["wan2.1-tiny", "wan2.2-tiny"])
@pytest.mark.slow
def test_decodes_under_the_older_norm_give_its_bits(diffusers_before_0_38, monkeypatch, arch, dtype):
    """The 16-bit decodes run diffusers' own norms (the fused norm is never called) and give the older
    diffusers' bits, which the fused path would not; fp32 still fuses."""
    fused = []
    original = decoder_module.rms_norm_cat_pad_5d

    def counted(*args, **kwargs):
        fused.append(args[0].dtype)
        return original(*args, **kwargs)

    monkeypatch.setattr(decoder_module, "rms_norm_cat_pad_5d", counted)
    stock, omni = pair(arch, dtype)
    z = latents(arch, dtype, "cpu", frames=3, batch=2)
    with torch.no_grad():
        expected = stock.decode(z, return_dict=False)[0]
        got = omni.decode(z, return_dict=False)[0]
    assert got.stride() == expected.stride() and torch.equal(got, expected)
    assert bool(fused) == (dtype == torch.float32)
    if dtype != torch.float32:  # the fused path, had it run, would have given the newer diffusers' bits
        monkeypatch.setitem(decoder_module.NORM_IS_INSTALLED_DIFFUSERS, dtype, True)
        with torch.no_grad():
            assert not torch.equal(omni.decode(z, return_dict=False)[0], expected)


def test_a_norm_that_cannot_be_checked_is_not_fused(monkeypatch):
    def unsupported(self, x):
        raise NotImplementedError(f"no CPU kernel for {x.dtype}")

    monkeypatch.setattr(WanRMS_norm, "forward", unsupported)
    assert not norm_op.installed_norm_rounds_as_reference(torch.bfloat16)
