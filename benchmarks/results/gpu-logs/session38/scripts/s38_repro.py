"""Session 38: the two fp32 examples hypothesis found on the GPU in D, run on the tree whose tests/ is in argv[1]."""
import os
import sys

tree = sys.argv[1]
sys.path[:0] = [os.path.join(tree, "tests"), tree]
import torch  # noqa: E402
import test_rms_norm_cat_pad_5d as t  # noqa: E402

cases = [
    ("bias", t.test_bias_is_added_as_stock_conv_adds_it, dict(
        case=((1, 3, 1, 1, 2, 0, 0, 0, None, 0, torch.float32, "contiguous", "contiguous", 0, False), False, False,
              1.0), bias_seed=0)),
    ("norm_frames", t.test_norm_frames_normalizes_each_chunk_on_its_own, dict(
        case=((1, 33, 1, 2, 1, 2), torch.float32, "contiguous", False, False, True, 0))),
]
for name, test, kwargs in cases:
    for impl in ("triton", "reference"):
        try:
            test.hypothesis.inner_test(device="cuda", impl=impl, **kwargs)
            print(tree, name, impl, "passed")
        except AssertionError as exc:
            print(tree, name, impl, "FAILED", str(exc).splitlines()[0][:100])
