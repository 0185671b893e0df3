"""benchmarks/decode_floor.py: what it counts of a decode's convs (on the meta device, no GPU)."""

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest
import torch
from diffusers.models.autoencoders.autoencoder_kl_wan import WanCausalConv3d
from torch.utils.flop_counter import FlopCounterMode

from torch_wanops.bench import decode_case

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "decode_floor.py"
spec = importlib.util.spec_from_file_location("decode_floor", SCRIPT)
decode_floor = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = decode_floor  # its dataclass looks its module up there
spec.loader.exec_module(decode_floor)


@pytest.mark.parametrize("model", ["wan2.1-tiny", "wan2.2-tiny"])
def test_conv_flops_are_the_flop_counters(model):
    vae, z = decode_case(argparse.Namespace(model=model, dtype="bf16", size="64x64", frames=5), "meta")
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        vae.decode(z, return_dict=False)
    conv_flops = sum(n for op, n in counter.get_flop_counts()["Global"].items() if "convolution" in str(op))
    assert decode_floor.count(vae, z).flops == conv_flops > 0


@pytest.mark.parametrize("cached_frames", [0, 1, 2])
def test_a_causal_conv_reads_its_cached_frames_and_border(cached_frames):
    conv = WanCausalConv3d(4, 6, 3, padding=1).to(device="meta", dtype=torch.bfloat16)
    x = torch.empty(2, 4, 3, 5, 7, device="meta", dtype=torch.bfloat16)
    cache = torch.empty(2, 4, cached_frames, 5, 7, device="meta", dtype=torch.bfloat16) if cached_frames else None
    with decode_floor.CountConvs() as counter:
        conv(x, cache)
    # Zero frames fill in for missing cached ones: 2 frames in front either way, and a 1-pixel border.
    assert counter.traffic.input_bytes == 2 * 4 * (3 + 2) * (5 + 2) * (7 + 2) * 2
    assert counter.traffic.output_bytes == 2 * 6 * 3 * 5 * 7 * 2
    assert counter.traffic.flops == 2 * (2 * 6 * 3 * 5 * 7) * 4 * 27


def test_pointwise_convs_count_flops_but_no_bytes():
    conv = WanCausalConv3d(4, 6, 1).to(device="meta")
    with decode_floor.CountConvs() as counter:
        conv(torch.empty(1, 4, 2, 3, 3, device="meta"))
    assert counter.traffic.flops == 2 * (6 * 2 * 3 * 3) * 4
    assert counter.traffic.input_bytes == counter.traffic.output_bytes == 0


@pytest.mark.parametrize(
    "frames, cached_frames, zero_taps, uncached_one_frame",
    [(1, 0, 2, True), (3, 0, 2 + 1, False), (3, 1, 1, False), (1, 1, 1, False), (3, 2, 0, False)],
)
def test_the_flops_on_causal_zero_frames(frames, cached_frames, zero_taps, uncached_one_frame):
    """Output frame t reads input frames t..t+2 of [zeros, cache, x]: the taps on the zeros are counted apart, and
    those of a conv with no cached frame and one output frame (a first chunk's) apart again."""
    conv = WanCausalConv3d(4, 6, 3, padding=1).to(device="meta", dtype=torch.bfloat16)
    x = torch.empty(2, 4, frames, 5, 7, device="meta", dtype=torch.bfloat16)
    cache = torch.empty(2, 4, cached_frames, 5, 7, device="meta", dtype=torch.bfloat16) if cached_frames else None
    stock_forward = WanCausalConv3d.forward
    with decode_floor.CountConvs() as counter:
        conv(x, cache)
    assert WanCausalConv3d.forward is stock_forward  # unpatched after the mode
    per_tap = 2 * (2 * 6 * 5 * 7) * 4 * 9
    assert counter.traffic.zero_frame_flops == zero_taps * per_tap
    assert counter.traffic.uncached_one_frame_zero_frame_flops == (zero_taps * per_tap if uncached_one_frame else 0)
    assert counter.traffic.flops == frames * 3 * per_tap


@pytest.mark.parametrize("model", ["wan2.1-tiny", "wan2.2-tiny"])
def test_a_decodes_zero_frame_flops_are_a_part_of_its_conv_flops(model):
    vae, z = decode_case(argparse.Namespace(model=model, dtype="bf16", size="64x64", frames=9), "meta")
    traffic = decode_floor.count(vae, z)
    assert 0 < traffic.uncached_one_frame_zero_frame_flops < traffic.zero_frame_flops < traffic.flops
