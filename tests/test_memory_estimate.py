"""benchmarks/memory_estimate.py: its models of the conv-layout check, the batched latent stage and attention (the
estimate itself runs on the meta device)."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "memory_estimate.py"
spec = importlib.util.spec_from_file_location("memory_estimate", SCRIPT)
memory_estimate = importlib.util.module_from_spec(spec)
spec.loader.exec_module(memory_estimate)


def run_estimate(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, str(SCRIPT), "--size", "64x64", "--frames", "5", "--top", "1", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_fake_kernels_differ_only_for_a_channels_last_input_of_a_refused_shape():
    conv_kernels = memory_estimate.conv_with_fake_kernels({(1, 2, 3, 4, 5)})
    weight = torch.ones(2, 2, 1, 1, 1, device="meta")
    conv = lambda x: F.conv3d(x, weight)  # noqa: E731
    refused = torch.empty(1, 2, 3, 4, 5, device="meta")
    other = torch.empty(1, 2, 3, 4, 6, device="meta")
    kernels = lambda x: conv_kernels(conv, x)[1]  # noqa: E731
    channels_last = torch.channels_last_3d
    assert kernels(refused) != kernels(refused.contiguous(memory_format=channels_last))
    assert kernels(other) == kernels(other.contiguous(memory_format=channels_last)) == kernels(refused)
    out, _ = conv_kernels(conv, refused)
    assert out.shape == (1, 2, 3, 4, 5)


def test_refuse_makes_the_check_refuse_that_input_shape_and_names_shapes_no_conv_has():
    # (1, 96, 6, 66, 66): the head conv's input of a later chunk at 64x64 (4 frames + 2 cached).
    result = run_estimate("--channels-last-convs", "--refuse", "1,96,6,66,66", "--refuse", "1,2,3,4")
    assert result.returncode == 0, result.stderr
    assert "--refuse 1,96,6,66,66: refused" in result.stdout
    assert "--refuse 1,2,3,4: no conv has this input shape" in result.stdout


@pytest.mark.parametrize("cuda_path", [[], ["--channels-last-convs"]], ids=["as-is", "cuda-path"])
def test_estimates_a_decode_whose_latent_frames_run_in_groups(cuda_path):
    # 9 frames: 3 latent frames, the last two a group of the batched latent stage (checked, or with the CUDA path
    # modelled, accepted as on the H200).
    result = run_estimate("--frames", "9", *cuda_path)
    assert result.returncode == 0, result.stderr
    assert re.search(r"^wanops: peak [\d.]+ GiB", result.stdout, re.M), result.stdout


def test_attention_is_counted_as_its_fused_kernels_allocate():
    query, key, value = (torch.empty(5, 1, 6240, 384, device="meta") for _ in range(3))
    tracker = memory_estimate.LiveStorages()
    with tracker:
        out = memory_estimate.fused_attention(query, key, value)
    assert out.shape == (5, 1, 6240, 384) and out.device.type == "meta"
    assert tracker.peak == out.numel() * out.element_size()  # no (5, 1, 6240, 6240) score matrix


@pytest.mark.parametrize("args, message", [(["--refuse", "1,96,6,66,66"], "needs --channels-last-convs"),
                                           (["--channels-last-convs", "--refuse", "1,x,3,4"], "N,C[,T],H,W"),
                                           (["--channels-last-convs", "--refuse", "1,0,3,4"], "positive")])
def test_refuse_arguments_are_checked(args, message, monkeypatch, capsys):
    # In process: argparse refuses them before main() builds or patches anything.
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), "--size", "64x64", *args])
    with pytest.raises(SystemExit) as exit_info:
        memory_estimate.main()
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
