"""benchmarks/conv_replay.py: the conv calls it records of a decode, and their replay (CPU, no GPU needed)."""

import argparse
import os
import sys

import pytest
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

from conv_replay import record_convs, replay  # noqa: E402

from torch_wanops import decoder  # noqa: E402
from torch_wanops.bench import decode_case, variant  # noqa: E402


@pytest.mark.parametrize("model", ["wan2.1-tiny", "wan2.2-tiny"])
def test_every_conv_of_a_stock_decode_is_recorded_in_order(model):
    vae, z = decode_case(argparse.Namespace(model=model, dtype="fp32", size="32x32", frames=5), "cpu")
    modules = [m for m in vae.decoder.modules() if isinstance(m, (nn.Conv2d, nn.Conv3d))]
    seen = []
    handles = [m.register_forward_hook(lambda m, args, out: seen.append(m.weight)) for m in modules]
    try:
        with variant(vae, "diffusers-eager"):
            calls = record_convs(lambda: vae.decode(z, return_dict=False))
    finally:
        for handle in handles:
            handle.remove()
    assert calls[0].args[1] is vae.post_quant_conv.weight
    assert len(calls) == len(seen) + 1 and len(seen) > 10
    assert all(call.args[1] is weight for call, weight in zip(calls[1:], seen))


def test_each_call_replays_the_first_input_of_its_geometry():
    conv = nn.Conv3d(3, 4, 3, padding=1).double()
    first = torch.randn(1, 3, 4, 6, 5, dtype=torch.float64)
    second = torch.randn(1, 3, 4, 6, 5, dtype=torch.float64)
    permuted = torch.randn(1, 4, 6, 5, 3, dtype=torch.float64).permute(0, 4, 1, 2, 3)  # channels_last_3d strides
    outputs = []

    def run():
        for x in (first, second, permuted):
            outputs.append(conv(x))
        first.zero_()  # the recorded input is a copy, taken before the decode goes on

    calls = record_convs(run)
    assert len(calls) == 3
    assert calls[0].args[0] is calls[1].args[0] and calls[2].args[0] is not calls[0].args[0]
    assert calls[2].args[0].stride() == permuted.stride()
    assert torch.equal(calls[0].op(*calls[0].args, **calls[0].kwargs), outputs[0])
    assert torch.equal(calls[2].op(*calls[2].args, **calls[2].kwargs), outputs[2])
    replay(calls)


def test_convs_the_decoder_dispatches_below_autograd_are_recorded():
    x, weight = torch.randn(1, 3, 4, 5, 5), torch.randn(2, 3, 3, 3, 3)

    def run():
        with decoder.dispatch_below_autograd():  # hides its ops from dispatch modes where it is on
            F.conv3d(x, weight)

    assert len(record_convs(run)) == 1
    assert decoder.DISPATCH_BELOW_AUTOGRAD
