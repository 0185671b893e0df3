"""The wanops CLI: each subcommand runs, exit codes, the --json schema."""

import collections
import contextlib
import functools
import importlib
import json
import logging
import math
import subprocess
import sys

import pytest
import torch

import torch_wanops
from torch_wanops import bench, cli

SMALL = ["bench", "--model", "wan2.2-tiny", "--height", "32", "--width", "48", "--frames", "5", "--repeat", "2"]


def test_bench_writes_the_json_schema(tmp_path, capsys):
    path = tmp_path / "out.json"
    assert cli.main(["--device", "cpu", *SMALL, "--json", str(path)]) == 0
    printed = capsys.readouterr().out
    assert "random (seeded)" in printed and "wanops-eager" in printed
    result = json.loads(path.read_text())
    for key in ("device", "torch", "triton", "diffusers", "model", "dtype", "shape", "rows", "conv_layout_refused"):
        assert key in result
    assert result["conv_layout_refused"] == []  # the conv-layout lever is CUDA-only: nothing checked on CPU
    assert result["model"] == "wan2.2-tiny" and result["dtype"] == "fp32" and result["autocast"] is False
    assert [row["variant"] for row in result["rows"]] == ["diffusers-eager", "wanops-eager"]
    assert result["timing"] == bench.TIMING
    stock, ours = result["rows"]
    assert stock["bit_exact"] is None and stock["speedup"] == 1.0
    assert ours["bit_exact"] is True
    for row in result["rows"]:
        assert row["median_s"] > 0 and row["peak_bytes"] is None and len(row["times_s"]) == 2


def test_bench_reports_the_conv_geometries_the_check_refused(monkeypatch, capsys):
    """A case's refused conv geometries (the lever forced on CPU, every Conv2d refused) are in its result and table."""
    from torch_wanops import decoder as decoder_module

    monkeypatch.setattr(decoder_module, "_channels_last_convs_supported", lambda x: True)
    monkeypatch.setattr(decoder_module, "_channels_last_conv_verdicts", {(): False})  # a stale verdict, cleared
    monkeypatch.setattr(decoder_module, "_lever_gives_stock_bits", lambda padded, *args: padded.dim() == 5)
    config = bench.BenchConfig(model="wan2.2-tiny", dtype="bf16", height=32, width=48, frames=5, device="cpu", repeat=1)
    result = bench.run_bench(config)
    refused = result["conv_layout_refused"]
    upsamplers = [geometry for geometry in decoder_module._channels_last_conv_verdicts if len(geometry.weight_shape) == 4]
    assert refused and refused == [bench.describe_geometry(geometry) for geometry in upsamplers]
    assert all(", 3, 3)" in line for line in refused)  # the Conv2ds' 3x3 weights
    table = bench.format_table(result)
    assert all(line in table for line in refused)


def test_bench_under_autocast_decodes_through_the_ops(monkeypatch, tmp_path, capsys):
    """--autocast: every decode under autocast to the VAE's dtype, where the walk runs (autocast set aside)."""
    from torch_wanops import decoder as decoder_module

    states = []
    causal_conv = decoder_module.causal_conv

    def recorded(conv, x, *args, **kwargs):
        states.append(torch.is_autocast_enabled("cpu"))
        return causal_conv(conv, x, *args, **kwargs)

    monkeypatch.setattr(decoder_module, "causal_conv", recorded)
    autocast = torch.autocast

    def recorded_autocast(*args, **kwargs):
        states.append(("autocast", kwargs.get("dtype"), kwargs.get("enabled")))
        return autocast(*args, **kwargs)

    monkeypatch.setattr(torch, "autocast", recorded_autocast)
    path = tmp_path / "out.json"
    assert cli.main(["--device", "cpu", *SMALL, "--dtype", "bf16", "--autocast", "--json", str(path)]) == 0
    assert "on cpu under autocast" in capsys.readouterr().out
    result = json.loads(path.read_text())
    assert result["autocast"] is True and result["rows"][1]["bit_exact"] is True
    assert states[0] == ("autocast", torch.bfloat16, True)
    assert False in states and True not in states  # the walk ran, with autocast off inside it


def test_bench_cli_autocast_needs_a_16_bit_dtype(capsys):
    with pytest.raises(SystemExit):
        cli.main(["--device", "cpu", "bench", "--autocast"])  # the CPU default is fp32
    assert "--autocast needs --dtype bf16 or fp16" in capsys.readouterr().err


def test_bench_autocast_needs_a_16_bit_dtype():
    config = bench.BenchConfig(model="wan2.2-tiny", dtype="fp32", height=32, width=48, frames=5, device="cpu",
                               autocast=True)
    with pytest.raises(ValueError, match="autocast needs a 16-bit dtype"):
        bench.run_bench(config)


def test_bench_compile_rows(monkeypatch, tmp_path):
    # The compiled variants' plumbing, with torch.compile as identity (real compiles are tested elsewhere).
    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: fn)
    path = tmp_path / "out.json"
    assert cli.main(["--device", "cpu", *SMALL, "--compile", "--json", str(path)]) == 0
    rows = json.loads(path.read_text())["rows"]
    assert [row["variant"] for row in rows] == list(bench.VARIANTS)
    assert all(row["bit_exact"] for row in rows[1:])


def test_bench_first_call_of_a_compiled_variant_is_two_decodes(monkeypatch):
    """Compiled variants are timed after two warm-up decodes (both compile), each logged, the others after one."""
    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: fn)
    decodes, messages = collections.Counter(), []
    timed_decode = bench.timed_decode

    def counted(*args):
        decodes[messages[-1].partition(":")[0]] += 1  # the variant the last progress message named
        return timed_decode(*args)

    monkeypatch.setattr(bench, "timed_decode", counted)
    config = bench.BenchConfig(model="wan2.2-tiny", dtype="fp32", height=32, width=48, frames=5, device="cpu",
                               repeat=1, compile=True)
    bench.run_bench(config, progress=messages.append)
    assert decodes == {"diffusers-eager": 2, "wanops-eager": 2, "diffusers-compiled": 3, "wanops-compiled": 3}
    # Each compiled warm-up decode is reported as it ends (a run cut while compiling says how far it got).
    warm_ups = [message.split(" took ")[0] for message in messages if " warm-up decode " in message]
    assert warm_ups == [f"{name}: warm-up decode {index} of 2" for name in ("diffusers-compiled", "wanops-compiled")
                        for index in (1, 2)]


def _scripted_decodes(monkeypatch, outputs):
    """run_bench with each timed decode replaced by ``outputs(variant, call)`` (call counted per variant, warm-ups
    included): the decodes' order as a list of (variant, call)."""
    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: fn)
    in_force, order = [], []
    original = bench.variant

    @contextlib.contextmanager
    def recording_variant(vae, name):
        with original(vae, name):
            in_force.append(name)
            yield

    def scripted(vae, z, device):
        name = in_force[-1]
        order.append((name, sum(1 for done, _ in order if done == name)))
        return outputs(*order[-1]), 0.5 + len(order) / 1000

    monkeypatch.setattr(bench, "variant", recording_variant)
    monkeypatch.setattr(bench, "timed_decode", scripted)
    return order


def test_bench_interleaves_the_eager_variants_round_by_round(monkeypatch):
    """Warm-ups first; then each round decodes stock first and the other eager variants in alternating order;
    the compiled variants after, each warmed up twice and timed in turn."""
    order = _scripted_decodes(monkeypatch, lambda name, call: torch.zeros(2))
    levers = bench.LEVER_VARIANTS[:2]
    config = bench.BenchConfig(model="wan2.2-tiny", dtype="fp32", height=32, width=48, frames=5, device="cpu",
                               repeat=3, levers=levers, compile=True)
    rows = bench.run_bench(config)["rows"]
    others = ["wanops-eager", *levers]
    forward, backward = ["diffusers-eager", *others], ["diffusers-eager", *others[::-1]]
    compiled = [name for name in bench.COMPILED_VARIANTS for _ in range(5)]
    assert [name for name, _ in order] == [*forward, *forward, *backward, *forward, *compiled]
    assert [row["variant"] for row in rows] == [*forward, *bench.COMPILED_VARIANTS]
    for row in rows:  # each row's times are its own timed decodes, not its warm-ups
        own = [0.5 + (index + 1) / 1000 for index, (name, call) in enumerate(order) if name == row["variant"]]
        assert row["times_s"] == own[-3:] and row["first_call_s"] == sum(own[:-3])
        assert row["median_s"] == own[-2]


def test_bench_compares_each_output_with_the_same_rounds_stock_output(monkeypatch):
    """Stock's output differs from round to round here; a variant that matches each round's is exact, one that
    misses a single round is not, and says by how much."""
    def outputs(name, call):
        out = torch.full((4,), float(call))
        if name == bench.LEVER_VARIANTS[0] and call == 2:
            out[1] += 0.25
        return out

    _scripted_decodes(monkeypatch, outputs)
    config = bench.BenchConfig(model="wan2.2-tiny", dtype="fp32", height=32, width=48, frames=5, device="cpu",
                               repeat=3, levers=bench.LEVER_VARIANTS[:1], compile=True)
    rows = {row["variant"]: row for row in bench.run_bench(config)["rows"]}
    assert rows["diffusers-eager"]["bit_exact"] is None
    assert rows["wanops-eager"]["bit_exact"] is True and rows["wanops-eager"]["max_abs_diff"] == 0
    lever = rows[bench.LEVER_VARIANTS[0]]
    assert lever["bit_exact"] is False and lever["max_abs_diff"] == 0.25 and lever["psnr_db"] < math.inf
    # The compiled variants (calls 2-4 after their two warm-ups) against the last round's stock output (call 3):
    # equal on call 3 only.
    assert all(rows[name]["bit_exact"] is False and rows[name]["max_abs_diff"] == 1.0
               for name in bench.COMPILED_VARIANTS)


def test_bench_says_when_compile_vae_keeps_the_case_eager(monkeypatch, caplog):
    """wanops-compiled on a device and dtype whose graphs are not known to give stock's bits (CPU fp32 taken
    out here, as fp32 CUDA is) times the eager path that compile_vae keeps, and says so."""
    from torch_wanops import compile as compile_module

    monkeypatch.setattr(torch, "compile", lambda fn, **kwargs: fn)
    monkeypatch.setattr(compile_module, "GRAPHS_GIVING_STOCK_BITS", frozenset())
    vae = bench.load_vae(bench.BenchConfig(model="wan2.1-tiny", dtype="fp32", height=32, width=32, frames=5,
                                           device="cpu"))
    with caplog.at_level(logging.WARNING, logger="torch_wanops.bench"):
        with bench.variant(vae, "wanops-compiled"):
            assert not compile_module.is_compiled(vae)
    assert "keeps this device and dtype on the eager lossless path" in caplog.text


@pytest.mark.slow
def test_bench_lever_variants(monkeypatch):
    """The benchmark's lever rows: each right after wanops-eager, each flips only its own switch, all restored."""
    import importlib

    def switches(vae):
        return {lever: getattr(vae.decoder if module is None else importlib.import_module(module), attribute, None)
                for lever, (module, attribute, _) in bench.LEVER_SWITCHES.items()}

    seen = {}
    original = bench.variant

    @contextlib.contextmanager
    def recording_variant(vae, name):
        with original(vae, name):
            seen[name] = switches(vae)
            yield

    monkeypatch.setattr(bench, "variant", recording_variant)
    config = bench.BenchConfig(model="wan2.2-tiny", dtype="fp32", height=32, width=48, frames=5, device="cpu",
                               repeat=1, levers=bench.LEVER_VARIANTS[::-1])
    vae_defaults = switches(bench.load_vae(config))
    vae_defaults[bench.STOCK_CONV_LAYOUT_VARIANT] = True  # the decoder's class default, once wanops applies
    messages = []
    rows = bench.run_bench(config, progress=messages.append)["rows"]
    assert [row["variant"] for row in rows] == ["diffusers-eager", "wanops-eager", *bench.LEVER_VARIANTS]
    # Each variant's numbers are reported as soon as measured (a run cut short keeps them).
    assert [m.split(":")[0] for m in messages if ": median " in m] == [row["variant"] for row in rows]
    assert all(row["bit_exact"] for row in rows[1:])  # on CPU the levers keep the exact stock arithmetic
    assert seen["wanops-eager"] == vae_defaults
    for lever, (_, _, value) in bench.LEVER_SWITCHES.items():
        assert vae_defaults[lever] != value  # a lever row moves its switch away from the default
        assert seen[lever] == {**vae_defaults, lever: value}
    # The module-level switches are back to their defaults (the decoder one lives on the instance).
    after = switches(bench.load_vae(config))
    for state in (after, vae_defaults):
        del state[bench.STOCK_CONV_LAYOUT_VARIANT]
    assert after == vae_defaults


def test_bench_unknown_lever_is_refused():
    config = bench.BenchConfig(model="wan2.1-tiny", dtype="fp32", height=32, width=32, frames=5, device="cpu",
                               levers=("wanops-eager-no-such-lever",))
    with pytest.raises(ValueError, match="levers must be among"):
        bench.run_bench(config)


def test_bench_unknown_variant_is_refused():
    vae = bench.load_vae(bench.BenchConfig(model="wan2.1-tiny", dtype="fp32", height=32, width=32, frames=5,
                                           device="cpu"))
    with pytest.raises(ValueError, match="unknown variant"):
        with bench.variant(vae, "wanops-compiled-no-such-lever"):
            pass


def test_bench_with_local_weights(tmp_path, capsys):
    from torch_wanops.configs import build_vae

    build_vae("wan2.1-tiny", seed=3).save_pretrained(tmp_path / "vae")
    assert cli.main(["--device", "cpu", "bench", "--model", "wan2.1-tiny", "--height", "32", "--width", "32",
                     "--frames", "5", "--repeat", "1", "--weights", str(tmp_path / "vae")]) == 0
    assert str(tmp_path / "vae") in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["--device", "tpu", "bench"], "argument --device: must be cpu or cuda[:N], got 'tpu'"),
    (["--device", "cpu:1", "bench"], "argument --device: must be cpu or cuda[:N], got 'cpu:1'"),
    (["--device", "cpu", "bench", "--height", "0"], "argument --height: must be a positive int, got '0'"),
    (["--device", "cpu", "bench", "--width", "-16"], "argument --width: must be a positive int, got '-16'"),
    (["--device", "cpu", "bench", "--frames", "x"], "argument --frames: must be a positive int, got 'x'"),
    (["--device", "cpu", "bench", "--repeat", "0"], "argument --repeat: must be a positive int, got '0'"),
    (["--device", "cpu", "bench", "--frames", "4"], "frames must be 4k + 1 (1, 5, ..., 81), got 4"),
    (["--device", "cpu", "bench", "--model", "wan2.2-tiny", "--height", "40"],
     "for wan2.2-tiny: height and width must be positive multiples of 16 for this model, got 40x128"),
])
def test_bench_usage_errors_exit_2_naming_the_argument(monkeypatch, capsys, argv, message):
    def not_reached(*args, **kwargs):
        raise AssertionError("the bench ran")

    monkeypatch.setattr(cli, "run_bench", not_reached)
    with pytest.raises(SystemExit) as excinfo:
        cli.main(argv)
    assert excinfo.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("folder", ["missing", "empty"])
def test_bench_weights_must_be_a_local_checkpoint_folder(monkeypatch, tmp_path, capsys, folder):
    (tmp_path / "empty").mkdir()
    monkeypatch.setattr(cli, "run_bench", lambda *args, **kwargs: pytest.fail("the bench ran"))
    with pytest.raises(SystemExit) as excinfo:
        cli.main(["--device", "cpu", "bench", "--weights", str(tmp_path / folder)])
    assert excinfo.value.code == 2
    assert "--weights must be a local diffusers AutoencoderKLWan folder (with a config.json)" in capsys.readouterr().err


def test_bench_with_local_weights_checks_the_size_by_the_checkpoints_scale(tmp_path):
    from torch_wanops.configs import build_vae

    build_vae("wan2.2-tiny", seed=3).save_pretrained(tmp_path / "vae")
    with pytest.raises(ValueError, match="height and width must be positive multiples of 16 for this model, got 40x32"):
        cli.main(["--device", "cpu", "bench", "--height", "40", "--width", "32", "--frames", "5", "--repeat", "1",
                  "--weights", str(tmp_path / "vae")])


@pytest.mark.parametrize("argv,rounds", [([], 5), (["--repeat", "2"], 2)])
def test_bench_on_cpu_times_five_rounds_by_default(monkeypatch, argv, rounds):
    configs = []

    def captured(config, progress=None):
        configs.append(config)
        raise KeyboardInterrupt  # no decode: only the config is under test

    monkeypatch.setattr(cli, "run_bench", captured)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["--device", "cpu", "bench", *argv])
    assert configs[0].repeat == rounds and configs[0].model == "wan2.1-tiny"


@pytest.mark.slow
def test_check_passes_here(capsys):
    assert cli.main(["--device", "cpu", "check"]) == 0
    out = capsys.readouterr().out
    assert "all bit-exact" in out
    assert [line.split()[:2] for line in out.splitlines() if "under autocast" in line] == [
        ["wan2.1-tiny", "bf16"], ["wan2.2-tiny", "bf16"]]


@pytest.mark.slow
def test_check_fails_on_mismatch(monkeypatch, capsys):
    from torch_wanops import decoder

    original = decoder.OmniWanDecoder.decode_chunk

    def off_by_a_bit(self, *args, **kwargs):
        return original(self, *args, **kwargs) * (1 + 2**-10)

    monkeypatch.setattr(decoder.OmniWanDecoder, "decode_chunk", off_by_a_bit)
    assert cli.main(["--device", "cpu", "check"]) == 1
    assert "MISMATCH" in capsys.readouterr().out


def test_info_lists_implementations(capsys):
    assert cli.main(["--device", "cpu", "info"]) == 0
    out = capsys.readouterr().out
    assert "wanops::cat_pad_5d" in out and "wanops::dup_up3d_add" in out and "torch" in out
    assert "fp64: reference" in out


def test_info_shows_where_the_norm_is_fused(capsys, monkeypatch):
    norm_op = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")
    monkeypatch.setitem(norm_op.NORM_IS_INSTALLED_DIFFUSERS, torch.bfloat16, False)
    assert cli.main(["--device", "cpu", "info"]) == 0
    out = capsys.readouterr().out.split("fused norms")[1]
    assert "bf16: diffusers own" in out and "fp16: fused" in out and "fp32: fused" in out and "fp64: fused" in out


def test_info_shows_which_dtypes_compile_vae_compiles(capsys, monkeypatch):
    from torch_wanops import compile as compile_module

    monkeypatch.setattr(compile_module, "EXACT_STRIDES_TAG", object())  # as torch >= 2.8 has it
    cli.main(["--device", "cpu", "info"])
    out = capsys.readouterr().out
    assert "cpu fp32: compiled" in out and "cpu bf16: eager" in out and "cannot tag" not in out
    monkeypatch.setattr(compile_module, "GRAPHS_GIVING_STOCK_BITS", frozenset({("cpu", torch.bfloat16)}))
    cli.main(["--device", "cpu", "info"])
    out = capsys.readouterr().out
    assert "cpu fp32: eager" in out and "cpu bf16: compiled" in out
    monkeypatch.setattr(compile_module, "EXACT_STRIDES_TAG", None)  # torch < 2.8
    cli.main(["--device", "cpu", "info"])
    out = capsys.readouterr().out
    assert "cpu bf16: eager" in out and "cannot tag the ops for their inputs' exact strides: every pair eager" in out


def test_info_shows_which_ops_have_their_inductor_lowering(capsys, monkeypatch):
    from torch._inductor import lowering

    cli.main(["--device", "cpu", "info"])
    assert "registered for every op" in capsys.readouterr().out.split("Inductor lowerings")[1]
    monkeypatch.delitem(lowering.lowerings, torch.ops.wanops.dup_up3d_add.default)
    cli.main(["--device", "cpu", "info"])
    out = capsys.readouterr().out.split("Inductor lowerings")[1]
    assert "implicit for wanops.dup_up3d_add.default\n" in out and "every op" not in out


def test_info_shows_the_lever_switches(capsys, monkeypatch):
    from torch_wanops import decoder

    cli.main(["--device", "cpu", "info"])
    assert "torch_wanops.decoder.FRAME_MAJOR_NORM_INPUTS = True" in capsys.readouterr().out
    monkeypatch.setattr(decoder, "FRAME_MAJOR_NORM_INPUTS", False)
    cli.main(["--device", "cpu", "info"])
    out = capsys.readouterr().out
    assert "torch_wanops.decoder.FRAME_MAJOR_NORM_INPUTS = False" in out
    assert "torch_wanops.decoder.OmniWanDecoder.channels_last_convs = True" in out
    assert 'importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d").SILU_BY_TABLE = True' in out


def test_info_lists_every_decoder_switch():
    from torch_wanops import decoder

    switches = {name for name, value in vars(decoder).items()
                if name.isupper() and not name.startswith("_") and isinstance(value, bool)}
    assert switches <= {path for module, path, _ in cli.LEVERS if module == "torch_wanops.decoder"}


def test_info_spells_each_switch_so_that_setting_it_takes_effect(capsys):
    cli.main(["--device", "cpu", "info"])
    lines = capsys.readouterr().out.split("levers (lossless switches):")[1].split("compile_vae graphs")[0]
    spelled = [line.split(" = ")[0].strip() for line in lines.strip().splitlines()]
    assert len(spelled) == len(cli.LEVERS)
    for name, (module, path, _) in zip(spelled, cli.LEVERS):
        owner, attribute = path.rpartition(".")[0], path.rpartition(".")[2]
        target = functools.reduce(getattr, owner.split(".") if owner else [], importlib.import_module(module))
        before = getattr(target, attribute)
        try:
            exec(f"{name} = not {name}", {"importlib": importlib, "torch_wanops": torch_wanops})
            assert getattr(target, attribute) is (not before), name
        finally:
            setattr(target, attribute, before)


def test_console_entry_points_run():
    done = subprocess.run([sys.executable, "-m", "torch_wanops", "--device", "cpu", "info"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "wanops::cat_pad_5d" in done.stdout
