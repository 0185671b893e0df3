"""benchmarks/clock_power.py: nvidia-smi's samples read and cut per decode (no GPU needed)."""

import argparse
import datetime
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks"))

import clock_power  # noqa: E402
from clock_power import Sample, Window, describe, parse_samples, spans_window, warmed_decode, window  # noqa: E402

from torch_wanops.bench import decode_case  # noqa: E402


def stamp(seconds: float) -> str:
    when = datetime.datetime(2026, 12, 4, 17, 50) + datetime.timedelta(seconds=seconds)
    return when.strftime("%Y/%m/%d %H:%M:%S.%f")[:-3]


def epoch(seconds: float) -> float:
    return (datetime.datetime(2026, 12, 4, 17, 50) + datetime.timedelta(seconds=seconds)).timestamp()


def test_lines_become_samples_and_unfilled_ones_are_skipped():
    lines = [
        f"{stamp(0.0)}, 1980, 612.45, 0x0000000000000000",
        f"{stamp(0.02)}, 1755, 699.10, 0x0000000000000004",
        f"{stamp(0.04)}, [N/A], 650.00, 0x0000000000000000",  # a field the driver did not fill
        "",
        "garbage",
    ]
    assert parse_samples(lines) == [
        Sample(epoch(0.0), 1980.0, 612.45, "0x0000000000000000"),
        Sample(epoch(0.02), 1755.0, 699.10, "0x0000000000000004"),
    ]


def test_a_window_keeps_the_samples_of_its_span():
    readings = [(0, 1980, 300, "0x0"), (1, 1800, 690, "0x4"), (2, 1700, 700, "0x4"), (3, 1760, 695, "0x0"),
                (4, 1980, 250, "0x0")]
    samples = [Sample(float(t), clock, power, mask) for t, clock, power, mask in readings]
    assert window(samples, 1.0, 3.0) == Window(3, 1760, (690 + 700 + 695) / 3, ("0x4", "0x0"))
    assert window(samples, 5.0, 6.0) == Window(0, None, None, ())


def test_warmed_decode_warms_each_variant_then_times_one_decode(monkeypatch):
    vae, z = decode_case(argparse.Namespace(model="wan2.1-tiny", dtype="fp32", size="32x32", frames=5), "cpu")
    decoded = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: decoded.append("sync"))
    monkeypatch.setattr(vae, "decode", lambda latents, return_dict: decoded.append(latents is z))
    decode = warmed_decode(vae, z, ["diffusers-eager", "wanops-eager"])
    assert decoded == [True, "sync"] * 2
    start, end = decode("wanops-eager")
    assert decoded == [True, "sync"] * 3 and start <= end


def test_spans_window_keeps_the_samples_of_every_span():
    readings = [(0, 1980, 300, "0x0"), (1, 1800, 690, "0x4"), (2, 1700, 700, "0x4"), (3, 1760, 695, "0x0"),
                (4, 1500, 650, "0x4")]
    samples = [Sample(float(t), clock, power, mask) for t, clock, power, mask in readings]
    assert spans_window(samples, [(0.5, 1.5), (3.5, 4.5)]) == Window(2, 1650, (690 + 650) / 2, ("0x4",))
    assert spans_window(samples, []) == Window(0, None, None, ())


def test_describe_gives_the_energy_of_the_seconds_at_the_mean_power():
    seen = Window(339, 1515, 691.0, ("0x0000000000000004",))
    assert describe(seen, 0.9824) == " 339   1515 MHz   691 W   678.8 J  0x0000000000000004"
    assert describe(Window(0, None, None, ()), 0.9824) == "   0      - MHz     - W       - J  "


def test_without_nvidia_smi_the_block_runs_with_no_samples(monkeypatch):
    monkeypatch.setattr(clock_power.shutil, "which", lambda name: None)
    ran = []
    with clock_power.sampled(20) as samples:
        ran.append(True)
    assert ran == [True] and samples == []
