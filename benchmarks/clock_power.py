"""The GPU's SM clock and power while stock's and wanops' decodes run, round after round (CUDA).

    python benchmarks/clock_power.py --model wan2.2 --size 720x1280 --rounds 3

The same cuDNN conv kernels ran 13-17% slower inside wanops' Wan2.2 720x1280 decode than inside stock's on one
machine (gpu-logs/session44/E): wanops runs its convs back to back, stock between long memory-bound passes, and a
power-capped GPU lowers its clock under sustained tensor-core load. This samples ``nvidia-smi`` every
--interval-ms in the background while the variants decode in turn; each decode's samples (taken between its start
and its end) give its median SM clock, mean power draw and the throttle reasons the driver reported.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import NamedTuple

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from torch_wanops.bench import add_decode_case_arguments, decode_case, describe_cuda_case, variant  # noqa: E402

QUERY = "timestamp,clocks.sm,power.draw,{reasons}"


class Sample(NamedTuple):
    time_s: float  # seconds since the epoch, local time as nvidia-smi prints it
    sm_mhz: float
    power_w: float
    throttle: str  # nvidia-smi's bit mask of active throttle reasons, as printed


class Window(NamedTuple):
    samples: int
    median_sm_mhz: float | None
    mean_power_w: float | None
    throttle: tuple[str, ...]  # the distinct masks seen, in order


def reasons_field() -> str:
    """nvidia-smi's field of the active clock limiters: ``clocks_event_reasons.active`` since the drivers renamed
    the throttle reasons, ``clocks_throttle_reasons.active`` before."""
    listing = subprocess.run(["nvidia-smi", "--help-query-gpu"], capture_output=True, text=True).stdout
    renamed = "clocks_event_reasons.active"
    return renamed if renamed in listing else "clocks_throttle_reasons.active"


def parse_samples(lines: list[str]) -> list[Sample]:
    """nvidia-smi's ``--format=csv,noheader,nounits`` lines of QUERY; lines it could not fill are skipped."""
    samples = []
    for line in lines:
        fields = [field.strip() for field in line.split(",")]
        if len(fields) != 4:
            continue
        stamp, clock, power, throttle = fields
        try:
            when = datetime.datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").timestamp()
            samples.append(Sample(when, float(clock), float(power), throttle))
        except ValueError:
            continue
    return samples


def window(samples: list[Sample], start_s: float, end_s: float) -> Window:
    """What the samples taken from ``start_s`` to ``end_s`` say."""
    return spans_window(samples, [(start_s, end_s)])


def spans_window(samples: list[Sample], spans: list[tuple[float, float]]) -> Window:
    """What the samples taken within any of ``spans`` (start, end) say: a variant's decodes over several rounds."""
    inside = [sample for sample in samples if any(start <= sample.time_s <= end for start, end in spans)]
    if not inside:
        return Window(0, None, None, ())
    return Window(
        len(inside),
        statistics.median(sample.sm_mhz for sample in inside),
        statistics.fmean(sample.power_w for sample in inside),
        tuple(dict.fromkeys(sample.throttle for sample in inside)),
    )


@contextlib.contextmanager
def sampled(interval_ms: int) -> Iterator[list[Sample]]:
    """nvidia-smi's samples of the current GPU every ``interval_ms`` while the block runs; the list is filled when
    the block ends (and stays empty without nvidia-smi)."""
    samples: list[Sample] = []
    if shutil.which("nvidia-smi") is None:
        logging.warning("no nvidia-smi on this machine: no clock or power samples")
        yield samples
        return
    with tempfile.TemporaryFile("w+") as log, tempfile.TemporaryFile("w+") as errors:
        sampler = subprocess.Popen(
            ["nvidia-smi", f"--id={torch.cuda.current_device()}",
             f"--query-gpu={QUERY.format(reasons=reasons_field())}", "--format=csv,noheader,nounits",
             f"--loop-ms={interval_ms}"], stdout=log, stderr=errors, text=True)
        try:
            time.sleep(1.0)  # the sampler's first lines
            yield samples
        finally:
            sampler.terminate()
            sampler.wait()
        log.seek(0)
        samples.extend(parse_samples(log.read().splitlines()))
        if not samples:
            errors.seek(0)
            logging.warning("nvidia-smi gave no samples: %s", errors.read().strip())


def warmed_decode(
    vae: torch.nn.Module, latents: torch.Tensor, names: list[str]
) -> Callable[[str], tuple[float, float]]:
    """A decode of ``latents`` by the variant ``name``, which returns its start and end (time.time(), the GPU
    synchronised); each of ``names`` decodes once first (cuDNN's heuristics, the per-geometry checks, Triton's
    compiles)."""

    def decode(name: str) -> tuple[float, float]:
        start = time.time()
        with variant(vae, name), torch.no_grad():
            vae.decode(latents, return_dict=False)
        torch.cuda.synchronize()
        return start, time.time()

    for name in names:
        decode(name)
    return decode


def describe(seen: Window, seconds: float) -> str:
    """A window's samples, median SM clock, mean power, the energy of ``seconds`` at that power (a power-capped
    decode's time follows its energy: levers.md, session 46) and the throttle masks, on one line."""
    clock = "-" if seen.median_sm_mhz is None else f"{seen.median_sm_mhz:.0f}"
    power, energy = ("-", "-") if seen.mean_power_w is None else (
        f"{seen.mean_power_w:.0f}", f"{seen.mean_power_w * seconds:.1f}")
    return f"{seen.samples:4d}  {clock:>5s} MHz  {power:>4s} W  {energy:>6s} J  {' '.join(seen.throttle)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--interval-ms", type=int, default=20)
    args = parser.parse_args()
    print(describe_cuda_case(args), flush=True)
    vae, latents = decode_case(args, "cuda")
    names = ["diffusers-eager", "wanops-eager"]
    decode = warmed_decode(vae, latents, names)
    with sampled(args.interval_ms) as samples:
        spans = []
        for _ in range(args.rounds):
            for name in names:
                spans.append((name, *decode(name)))
            time.sleep(0.5)
    print(f"{len(samples)} samples; per decode: wall s, samples, median SM MHz, mean W, J, throttle reasons")
    for name, start, end in spans:
        print(f"  {name:16s} {end - start:.3f} s  {describe(window(samples, start, end), end - start)}", flush=True)


if __name__ == "__main__":
    main()
