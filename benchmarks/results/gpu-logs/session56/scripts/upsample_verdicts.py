"""session 56, F: the upsample calls' channels_last and the conv-layout verdicts of test_fused_upsample_keeps_the_bits'
fp32 batch-2 Wan2.1 tiny decode on CUDA (run from the repository root)."""
import sys

import torch

sys.path.insert(0, "tests")
import pytest  # noqa: E402
import test_decoder as t  # noqa: E402
from torch_wanops import decoder as decoder_module  # noqa: E402

patch = pytest.MonkeyPatch()
patch.setattr(decoder_module, "_channels_last_conv_verdicts", {})
patch.setattr(decoder_module, "FUSED_UPSAMPLE", True)
calls = t.record_upsample_calls(patch)
stock, omni = t.pair("wan2.1-tiny", torch.float32, "cuda")
t.assert_same_decode(stock, omni, t.latents("wan2.1-tiny", torch.float32, "cuda", frames=3, batch=2), "triton")
print("calls", calls)
for key, ok in decoder_module._channels_last_conv_verdicts.items():
    print(ok, key.input_shape, key.weight_shape)
