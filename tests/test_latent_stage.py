"""decoder.BATCHED_LATENT_STAGE: the latent-resolution stage on several frames per call, its check, its frame loop."""

import contextlib
import logging
import weakref

import pytest
import torch
from conftest import HAS_KERNELS, KERNEL_DEVICE, cuda, run_impl
from diffusers import AutoencoderKLWan
from test_decoder import assert_same_decode, latents, pair

import torch_wanops
from torch_wanops import decoder as decoder_module
from torch_wanops.apply import is_batched_decode
from torch_wanops.configs import build_vae, latent_shape

ARCHS = ("wan2.1-tiny", "wan2.2-tiny")
IMPLS = [("cpu", "reference")] + ([(KERNEL_DEVICE, "triton")] if HAS_KERNELS else [])


@pytest.fixture(autouse=True)
def batched_latent_stage(monkeypatch):
    """The batched loop on the CPU too (by default CUDA only), where its wiring and check are tested; tiny configs'
    stages are below LATENT_STAGE_MIN_ELEMENTS, which the tests lower unless they test it."""
    monkeypatch.setattr(decoder_module, "BATCHED_LATENT_STAGE", True)
    monkeypatch.setattr(decoder_module, "_latent_stage_verdicts", {})
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_DEVICES", frozenset({"cpu", "cuda"}))
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_MIN_ELEMENTS", 0)


class StageCalls:
    """Counts _latent_stage's calls by frames per call (``frames``; ``up_blocks``: how far each ran); with ``nudge``,
    a several-frame call's output is changed by one step of its dtype in one element (a stage whose kernels round
    otherwise for several frames)."""

    def __init__(self, monkeypatch, nudge=False):
        self.frames, self.up_blocks = [], []
        stage = decoder_module._latent_stage

        def counted(decoder, x, feat_cache, channels_last_convs, up_blocks=1):
            self.frames.append(x.shape[2])
            self.up_blocks.append(up_blocks)
            out, source, next_slot = stage(decoder, x, feat_cache, channels_last_convs, up_blocks)
            if nudge and x.shape[2] > 1:
                out = out.clone()
                out.view(-1)[0] = torch.nextafter(out.view(-1)[0], torch.tensor(float("inf"), dtype=out.dtype))
            return out, source, next_slot

        monkeypatch.setattr(decoder_module, "_latent_stage", counted)


@pytest.mark.parametrize("device,impl", IMPLS, ids=[f"{d}-{i}" for d, i in IMPLS])
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("dtype,batch,frames", [(torch.float32, 1, 8), (torch.bfloat16, 2, 6), (torch.float16, 1, 2)],
                         ids=str)
@pytest.mark.slow
def test_decode_is_bit_exact_whatever_the_check_finds(device, impl, arch, dtype, batch, frames):
    stock, omni = pair(arch, dtype, device)
    z = latents(arch, dtype, device, frames=frames, batch=batch)
    assert_same_decode(stock, omni, z, impl)
    # Where the check accepts, one verdict per group size of more than one frame (frame 0 alone, then groups of
    # LATENT_STAGE_FRAMES); where it refuses, smaller groups are checked too.
    group = decoder_module.LATENT_STAGE_FRAMES
    sizes = {min(group, frames - start) for start in range(1, frames, group)} - {1}
    verdicts = decoder_module._latent_stage_verdicts
    if all(verdicts.values()):
        assert len(verdicts) == len(sizes) and {key[0].input_shape[2] for key in verdicts} == sizes


@pytest.mark.parametrize("arch", ARCHS)
def test_a_stage_that_changes_bits_for_several_frames_is_refused(arch, monkeypatch, caplog):
    stock, omni = pair(arch)
    calls = StageCalls(monkeypatch, nudge=True)
    z = latents(arch, torch.float32, "cpu", frames=11)
    per_decode = []
    with caplog.at_level(logging.INFO, logger="torch_wanops.decoder"):
        for _ in range(3):
            calls.frames.clear()
            assert_same_decode(stock, omni, z, "reference")
            per_decode.append(list(calls.frames))
    assert "not bit-exact" in caplog.text
    # Each group size checks the stage through the second up block, then, in a later group, the one through the
    # first: 5 frames per call, then LATENT_STAGE_SMALLER_FRAMES' 3, then the last 4 frames as a group of their own
    # (its check through the second up block refuses it; the third decode's groups of 5 need no check).
    assert decoder_module.LATENT_STAGE_FRAMES == 5 and decoder_module.LATENT_STAGE_SMALLER_FRAMES == (3,)
    assert list(decoder_module._latent_stage_verdicts.values()) == [False] * 5
    stages = [tuple(type(block).__name__ for block in omni.decoder.up_blocks[:blocks]) for blocks in (2, 1)]
    assert [(key[0].input_shape[2], key[2]) for key in decoder_module._latent_stage_verdicts] == [
        (5, stages[0]), (5, stages[1]), (3, stages[0]), (3, stages[1]), (4, stages[0])]
    # Frame 0 is a stock chunk; a check runs its group both ways (the group, then one call per frame); once every
    # size is refused, the groups of 5 go frame by frame.
    assert per_decode == [([5] + [1] * 5) * 2, ([3] + [1] * 3) * 2 + [4] + [1] * 4, [1] * 10]


def test_an_accepted_geometry_runs_the_stage_once_per_group(monkeypatch):
    # float64 on the CPU: the several-frame stage computes the one-frame stages up to rounding; whether with
    # their bits is the GPU's question (session 30). Accepted here by hand, to check the loop's wiring.
    stock, omni = (build_vae("wan2.2-tiny", dtype=torch.float64, vae_class=cls)
                   for cls in (AutoencoderKLWan, torch_wanops.OmniAutoencoderKLWan))
    monkeypatch.setattr(decoder_module, "_latent_stage_verdicts", collections_defaulting_to(True))
    calls = StageCalls(monkeypatch)
    z = latents("wan2.2-tiny", torch.float64, "cpu", frames=8)
    with torch.no_grad(), torch_wanops.reference_kernels():
        expected = stock.decode(z, return_dict=False)[0]
        got = omni.decode(z, return_dict=False)[0]
    assert calls.frames == [5, 2]
    assert got.shape == expected.shape and got.stride() == expected.stride()
    torch.testing.assert_close(got, expected, rtol=1e-9, atol=1e-9)


class ShorterStageOnly(dict):
    """Verdicts: the stage through the second up block refused, the one through the first accepted."""

    def get(self, key, default=None):
        return len(key[2]) == 1


def test_a_refused_longer_stage_falls_back_to_the_first_up_block(monkeypatch):
    """Where the stage through the second up block is refused, each group still runs the one through the first in
    one call, and its frames' later stages start at the first up block's upsampler (float64, as above)."""
    stock, omni = (build_vae("wan2.2-tiny", dtype=torch.float64, vae_class=cls)
                   for cls in (AutoencoderKLWan, torch_wanops.OmniAutoencoderKLWan))
    monkeypatch.setattr(decoder_module, "_latent_stage_verdicts", ShorterStageOnly())
    calls = StageCalls(monkeypatch)
    z = latents("wan2.2-tiny", torch.float64, "cpu", frames=11)
    assert decoder_module.stage_up_blocks(omni.decoder, z) == 2
    with torch.no_grad(), torch_wanops.reference_kernels():
        expected = stock.decode(z, return_dict=False)[0]
        got = omni.decode(z, return_dict=False)[0]
    assert calls.frames == [5, 5] and calls.up_blocks == [1, 1]
    assert got.shape == expected.shape and got.stride() == expected.stride()
    torch.testing.assert_close(got, expected, rtol=1e-9, atol=1e-9)


class FiveFramesRefused(dict):
    """Verdicts: every stage of 5 frames per call refused, others accepted."""

    def get(self, key, default=None):
        return key[0].input_shape[2] != 5


def test_a_refused_group_size_falls_back_to_a_smaller_one(monkeypatch):
    """Where 5 frames per call are refused at every stage length, the groups hold 3 frames (float64, as above)."""
    stock, omni = (build_vae("wan2.2-tiny", dtype=torch.float64, vae_class=cls)
                   for cls in (AutoencoderKLWan, torch_wanops.OmniAutoencoderKLWan))
    monkeypatch.setattr(decoder_module, "_latent_stage_verdicts", FiveFramesRefused())
    calls = StageCalls(monkeypatch)
    z = latents("wan2.2-tiny", torch.float64, "cpu", frames=11)
    with torch.no_grad(), torch_wanops.reference_kernels():
        expected = stock.decode(z, return_dict=False)[0]
        got = omni.decode(z, return_dict=False)[0]
    # Frames 1-6 in groups of 3, frames 7-10 as a group of 5 would hold them (4 frames, accepted here).
    assert calls.frames == [3, 3, 4] and calls.up_blocks == [2, 2, 2]
    assert got.shape == expected.shape and got.stride() == expected.stride()
    torch.testing.assert_close(got, expected, rtol=1e-9, atol=1e-9)


def test_the_stage_runs_through_the_second_up_block_where_its_held_tensors_fit(monkeypatch):
    """stage_up_blocks: 2 for Wan2.2 bf16 at 480x832 (each held tensor 122 MiB), 1 at 720x1280, for Wan2.1's
    384-channel second up block at 480x832 (183 MiB), in fp32, or with the switch off."""
    decoders = {arch: build_vae(arch, vae_class=torch_wanops.OmniAutoencoderKLWan, device="meta").decoder
                for arch in ("wan2.1", "wan2.2")}

    def blocks(arch, height, width, dtype=torch.bfloat16):
        return decoder_module.stage_up_blocks(decoders[arch], torch.empty(latent_shape(arch, height, width, 81),
                                                                          dtype=dtype, device="meta"))

    assert blocks("wan2.2", 480, 832) == 2 and blocks("wan2.2", 480, 832, torch.float16) == 2
    assert blocks("wan2.2", 720, 1280) == 1 and blocks("wan2.2", 480, 832, torch.float32) == 1
    assert blocks("wan2.1", 480, 832) == 1 and blocks("wan2.1", 240, 416) == 2
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_THROUGH_SECOND_UP_BLOCK", False)
    assert blocks("wan2.2", 480, 832) == 1


def test_a_stage_too_small_for_the_check_is_refused_unchecked(monkeypatch):
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_MIN_ELEMENTS", 1 << 20)
    stock, omni = pair("wan2.1-tiny")
    calls = StageCalls(monkeypatch)
    assert_same_decode(stock, omni, latents("wan2.1-tiny", torch.float32, "cpu", frames=7), "reference")
    assert not decoder_module._latent_stage_verdicts  # no check ran, nothing recorded
    assert calls.frames == [1] * 6


def test_norms_outside_the_fused_op_run_each_chunk_on_its_own(monkeypatch):
    """With norm_frames, a norm the fused op does not take (the stock modules' path) normalizes each chunk of frames
    on its own, a contiguous tensor, as stock's chunk loop does; the block's output is the same either way."""
    _, omni = pair("wan2.2-tiny", torch.float64)
    block = omni.decoder.up_blocks[1].resnets[0]
    x = torch.randn(1, block.conv1.in_channels, 6, 5, 7, dtype=torch.float64)
    normalized = []
    stock_norm_act = decoder_module._stock_norm_act

    def recording(norm, activation, chunk):
        normalized.append((chunk.shape[2], chunk.is_contiguous()))
        return stock_norm_act(norm, activation, chunk)

    monkeypatch.setattr(decoder_module, "_stock_norm_act", recording)
    with torch.no_grad():
        fused = decoder_module.residual_block(block, x, [None] * 4, [0], False, 2)
        monkeypatch.setattr(decoder_module, "_fuses_norm_act_conv", lambda *args: False)
        unfused = decoder_module.residual_block(block, x, [None] * 4, [0], False, 2)
    assert normalized == [(2, True)] * 6  # two norms, three chunks each, only where not fused
    torch.testing.assert_close(unfused, fused, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("arch", ARCHS)
def test_each_frame_frees_its_stage_tensors_once_its_later_stages_ran(arch, monkeypatch):
    """A group's frames go to their later stages one by one; what each took from the stage (its output and, for a
    residual up block's DupUp3D shortcut, the up block's input) is freed before the next frame's later stages run,
    not held through the group. A plain up block (Wan2.1) hands on no input at all."""
    _, omni = pair(arch)
    monkeypatch.setattr(decoder_module, "_latent_stage_verdicts", collections_defaulting_to(True))
    handed, alive_when_next_frame_starts, source_handed = [], [], []
    later_stages = decoder_module.OmniWanDecoder._decode_after_latent_stage

    def recording(self, x, source, *args):
        alive_when_next_frame_starts.append(sum(ref() is not None for ref in handed))
        handed.extend(weakref.ref(tensor) for tensor in (x, source) if tensor is not None)
        source_handed.append(source is not None)
        return later_stages(self, x, source, *args)

    monkeypatch.setattr(decoder_module.OmniWanDecoder, "_decode_after_latent_stage", recording)
    with torch.no_grad():
        omni.decode(latents(arch, torch.float32, "cpu", frames=11))
    assert alive_when_next_frame_starts == [0] * 10  # two groups of 5 after frame 0
    assert source_handed == [arch == "wan2.2-tiny"] * 10


def test_a_meta_decode_cannot_check_and_runs_one_frame_per_call(monkeypatch):
    """Meta tensors hold no values, so the check cannot find the one-frame bits: refused, one frame per call (what
    benchmarks/memory_estimate.py decodes unless it models CUDA's accepted groups)."""
    monkeypatch.setattr(decoder_module, "LATENT_STAGE_DEVICES", frozenset({"meta"}))
    calls = StageCalls(monkeypatch)
    stock, omni = (build_vae("wan2.1-tiny", vae_class=cls).to("meta")
                   for cls in (AutoencoderKLWan, torch_wanops.OmniAutoencoderKLWan))
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=7).to("meta")
    with torch.no_grad():
        expected, got = (vae.decode(z, return_dict=False)[0] for vae in (stock, omni))
    assert got.is_meta and got.shape == expected.shape and got.stride() == expected.stride()
    assert list(decoder_module._latent_stage_verdicts.values()) == [False]
    assert calls.frames == [5] + [1] * 5 + [1]  # the check's two ways, then the last group's one frame


def collections_defaulting_to(value):
    class Verdicts(dict):
        def get(self, key, default=None):
            return value

    return Verdicts()


@pytest.mark.parametrize("case", ["switch-off", "one-frame", "tiling", "grad", "hooked-decoder", "compiled-forward",
                                  "cpu-by-default"])
def test_stock_decode_where_the_stage_is_not_batched(case, monkeypatch):
    stock, omni = pair("wan2.1-tiny")
    calls = StageCalls(monkeypatch)
    frames = 1 if case == "one-frame" else 7
    z = latents("wan2.1-tiny", torch.float32, "cpu", frames=frames)
    grad_mode = torch.enable_grad if case == "grad" else torch.no_grad
    if case == "switch-off":
        monkeypatch.setattr(decoder_module, "BATCHED_LATENT_STAGE", False)
    elif case == "tiling":
        for vae in (stock, omni):
            vae.enable_tiling(tile_sample_min_height=16, tile_sample_min_width=16, tile_sample_stride_height=8,
                              tile_sample_stride_width=8)
    elif case == "hooked-decoder":
        omni.decoder.register_forward_pre_hook(lambda module, args: None)
    elif case == "compiled-forward":
        monkeypatch.setitem(omni.decoder.__dict__, "forward", omni.decoder.forward)
    elif case == "cpu-by-default":
        monkeypatch.undo()  # the module's own LATENT_STAGE_DEVICES
        calls = StageCalls(monkeypatch)
    assert_same_decode(stock, omni, z, "reference", grad_mode)
    assert calls.frames == []


def test_apply_to_installs_the_frame_loop_and_restore_removes_it(tmp_path):
    stock, _ = pair("wan2.2-tiny")
    vae = build_vae("wan2.2-tiny")
    torch_wanops.apply_to(vae)
    assert is_batched_decode(vae.__dict__["_decode"])
    first = vae.__dict__["_decode"]
    torch_wanops.apply_to(vae)  # idempotent
    assert vae.__dict__["_decode"] is first
    assert_same_decode(stock, vae, latents("wan2.2-tiny", torch.float32, "cpu", frames=7), "reference")
    vae.save_pretrained(tmp_path)
    assert AutoencoderKLWan.load_config(tmp_path)["_class_name"] == "AutoencoderKLWan"
    torch_wanops.restore(vae)
    assert "_decode" not in vae.__dict__ and type(vae) is AutoencoderKLWan


def test_clear_conv_verdicts_forgets_the_stage_verdicts():
    stock, omni = pair("wan2.1-tiny")
    assert_same_decode(stock, omni, latents("wan2.1-tiny", torch.float32, "cpu", frames=6), "reference")
    assert decoder_module._latent_stage_verdicts
    decoder_module.clear_conv_verdicts()
    assert not decoder_module._latent_stage_verdicts


@cuda
@pytest.mark.parametrize("arch", ["wan2.1", "wan2.2", "wan2.1-tiny", "wan2.2-tiny"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
def test_batched_latent_stage_on_cuda(arch, dtype):
    stock, omni = pair(arch, dtype, "cuda")
    if arch in ("wan2.1", "wan2.2"):
        z = torch.randn(latent_shape(arch, 240, 416, 81), generator=torch.Generator().manual_seed(0)).to("cuda", dtype)
    else:
        z = latents(arch, dtype, "cuda", frames=11, batch=2)
    calls = [run_impl("triton", assert_same_decode, stock, omni, z) for _ in range(2)]
    assert torch.equal(calls[0], calls[1])
    print(f"{arch} {dtype}: verdicts {list(decoder_module._latent_stage_verdicts.values())}")


@pytest.mark.parametrize("switch", [True, False], ids=["below-autograd", "autograd-dispatch"])
def test_the_frame_loop_dispatches_below_autograd(switch, monkeypatch):
    """DISPATCH_BELOW_AUTOGRAD: decode_latents' ops skip the autograd dispatch layer (and not with the switch off,
    in grad mode, or after the decode), the same bits either way."""
    monkeypatch.setattr(decoder_module, "DISPATCH_BELOW_AUTOGRAD", switch)
    autograd = torch._C.DispatchKey.AutogradFunctionality
    below = []
    mid_block = decoder_module.mid_block

    def recording_mid_block(*args, **kwargs):
        below.append(torch._C._dispatch_tls_is_dispatch_key_excluded(autograd))
        return mid_block(*args, **kwargs)

    monkeypatch.setattr(decoder_module, "mid_block", recording_mid_block)
    stock, omni = pair("wan2.2-tiny")
    z = latents("wan2.2-tiny", torch.float32, "cpu", frames=3)
    assert_same_decode(stock, omni, z)
    assert below and all(flag == switch for flag in below)
    assert not torch._C._dispatch_tls_is_dispatch_key_excluded(autograd)
    with torch.enable_grad():
        assert isinstance(decoder_module.dispatch_below_autograd(), type(contextlib.nullcontext()))
