"""compile_callable_with_fallback, compile_vae, the WANOPS_COMPILE_VAE switch and prewarm."""

import contextlib
import importlib
import logging
import re
import threading

import pytest
import torch
from conftest import cuda, exact_strides_graphs
from test_decoder import is_frame_major
from torch._dynamo.utils import counters

import torch_wanops
from torch_wanops import _backend
from torch_wanops import compile as compile_module
from torch_wanops import decoder as decoder_module
from torch_wanops.configs import build_vae, latent_channels

# --- the helper, with torch.compile replaced -------------------------------------------------


def test_setup_failure_keeps_eager(monkeypatch, caplog):
    def eager(value):
        return value + 1

    def broken_compile(fn, **kwargs):
        raise RuntimeError("no compiler here")

    monkeypatch.setattr(compile_module.torch, "compile", broken_compile)
    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        fn, activated = torch_wanops.compile_callable_with_fallback(eager, label="probe")
    assert fn is eager and activated is False
    assert fn(1) == 2
    assert "continuing eagerly" in caplog.text and "probe" in caplog.text


def test_lazy_failure_falls_back_once_and_for_good(monkeypatch, caplog):
    calls = {"compiled": 0, "eager": 0}

    def eager(value):
        calls["eager"] += 1
        return value * 10

    def fake_compile(fn, **kwargs):
        assert fn is eager

        def compiled(value):
            calls["compiled"] += 1
            raise RuntimeError("lazy failure")

        return compiled

    monkeypatch.setattr(compile_module.torch, "compile", fake_compile)
    fn, activated = torch_wanops.compile_callable_with_fallback(eager, label="probe")
    assert activated
    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        assert fn(1) == 10
        assert fn(2) == 20
        assert fn(3) == 30
    assert calls == {"compiled": 1, "eager": 3}
    assert caplog.text.count("disabling compilation and retrying eagerly") == 1


@pytest.mark.parametrize("fn,label,message", [
    (1, "probe", "fn must be callable, got int"),
    (None, "probe", "fn must be callable, got NoneType"),
    (abs, b"probe", "label must be a str, got bytes"),
])
def test_caller_errors_raise_before_compiling(monkeypatch, fn, label, message):
    def counted_compile(fn, **kwargs):
        raise AssertionError("torch.compile reached")

    monkeypatch.setattr(compile_module.torch, "compile", counted_compile)
    with pytest.raises(TypeError, match=message):
        torch_wanops.compile_callable_with_fallback(fn, label=label)


def test_success_passes_kwargs_through(monkeypatch):
    seen = {}

    def fake_compile(fn, **kwargs):
        seen.update(kwargs)
        return lambda value: ("compiled", fn(value))

    monkeypatch.setattr(compile_module.torch, "compile", fake_compile)
    kwargs = dict(mode="max-autotune", fullgraph=True, dynamic=False, options=None)
    fn, activated = torch_wanops.compile_callable_with_fallback(lambda v: v + 1, label="probe", **kwargs)
    assert activated and fn(1) == ("compiled", 2)
    assert seen == kwargs


def test_fallback_is_thread_safe(monkeypatch, caplog):
    calls = {"compiled": 0}
    barrier = threading.Barrier(8)

    def fake_compile(fn, **kwargs):
        def compiled(value):
            calls["compiled"] += 1
            raise RuntimeError("lazy failure")

        return compiled

    monkeypatch.setattr(compile_module.torch, "compile", fake_compile)
    fn, _ = torch_wanops.compile_callable_with_fallback(lambda v: v + 1, label="probe")
    results = []

    def worker(value):
        barrier.wait()
        results.append(fn(value))
        results.append(fn(value))

    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(results) == sorted([i + 1 for i in range(8)] * 2)
    assert 1 <= calls["compiled"] <= 8  # each thread at most once, before the switch
    assert caplog.text.count("disabling compilation and retrying eagerly") == 1
    assert fn(100) == 101 and calls["compiled"] <= 8


# --- the switch ---------------------------------------------------------------------------------


@pytest.mark.parametrize("raw,expected", [("1", True), ("TRUE", True), ("yes", True), ("0", False), ("False", False),
                                          ("No", False), (None, True)])
def test_env_switch(monkeypatch, raw, expected):
    if raw is None:
        monkeypatch.delenv("WANOPS_COMPILE_VAE", raising=False)
    else:
        monkeypatch.setenv("WANOPS_COMPILE_VAE", raw)
    assert compile_module.compile_enabled_from_env() is expected


def test_env_switch_rejects_other_values(monkeypatch):
    monkeypatch.setenv("WANOPS_COMPILE_VAE", "maybe")
    with pytest.raises(ValueError, match="WANOPS_COMPILE_VAE"):
        torch_wanops.compile_vae(build_vae("wan2.1-tiny"))


@pytest.mark.parametrize("enabled", ["true", 1, 0.0])
def test_enabled_must_be_a_bool(enabled):
    with pytest.raises(TypeError, match="enabled must be a bool"):
        torch_wanops.compile_vae(build_vae("wan2.1-tiny"), enabled=enabled)


def test_disabled_keeps_the_eager_lossless_path(monkeypatch):
    monkeypatch.setenv("WANOPS_COMPILE_VAE", "0")
    vae = build_vae("wan2.1-tiny")
    assert torch_wanops.compile_vae(vae) is False
    assert type(vae.decoder) is torch_wanops.OmniWanDecoder
    assert "forward" not in vae.decoder.__dict__
    assert not compile_module.is_compiled(vae)


@pytest.mark.parametrize("mode", ["fastest", "Default", ""])
def test_mode_must_be_one_of_torch_compiles(mode, caplog):
    """A mode torch.compile does not know is the caller's error, not a compile failure that leaves the decoder eager."""
    vae = build_vae("wan2.1-tiny")
    with pytest.raises(ValueError, match=f"mode must be one of torch.compile's modes .*reduce-overhead.*{mode!r}"):
        torch_wanops.compile_vae(vae, enabled=True, mode=mode)
    assert "forward" not in vae.decoder.__dict__ and "torch.compile failed" not in caplog.text


@pytest.mark.parametrize("exact", ["yes", 1, None])
def test_exact_must_be_a_bool(exact):
    with pytest.raises(TypeError, match="exact must be a bool"):
        torch_wanops.compile_vae(build_vae("wan2.1-tiny"), enabled=True, exact=exact)


# Why graphs_give_stock_bits says no: the pair is not in GRAPHS_GIVING_STOCK_BITS (CPU fp32 taken out here, as fp32
# CUDA and 16-bit CPU are), or this torch cannot tag the ops for exact strides (torch < 2.8), and the warning's words.
KEPT_EAGER_REASONS = {
    "pair": ({"GRAPHS_GIVING_STOCK_BITS": frozenset({("cuda", torch.bfloat16)}), "EXACT_STRIDES_TAG": object()},
             "not known to give stock's bits for torch.float32 on cpu"),
    "torch": ({"EXACT_STRIDES_TAG": None}, "cannot make them hand the ops their inputs' exact strides (torch >= 2.8"),
}


@pytest.mark.parametrize("reason", sorted(KEPT_EAGER_REASONS))
@pytest.mark.parametrize("exact", [True, False])
def test_exact_keeps_pairs_without_stock_bits_graphs_eager(monkeypatch, caplog, exact, reason):
    """With exact (the default), chunks of a device and dtype whose graphs are not known to give stock's bits
    (KEPT_EAGER_REASONS) run the eager lossless path, warned once, and prewarm decodes once; exact=False runs the
    graphs (torch.compile replaced: each decode's three chunks counted)."""
    settings, warning = KEPT_EAGER_REASONS[reason]
    for name, value in settings.items():
        monkeypatch.setattr(compile_module, name, value)
    compiled_chunks = []

    def fake_compile(fn, **kwargs):
        return lambda *args: compiled_chunks.append(args[3]) or fn(*args)

    monkeypatch.setattr(compile_module.torch, "compile", fake_compile)
    stock = build_vae("wan2.1-tiny")
    vae = build_vae("wan2.1-tiny")
    assert torch_wanops.compile_vae(vae, enabled=True, exact=exact) is True
    forward = vae.decoder.forward
    eager_chunks, eager = [], forward.eager
    monkeypatch.setattr(forward, "eager", lambda *args: eager_chunks.append(args[3]) or eager(*args))
    z = torch.randn(1, latent_channels("wan2.1-tiny"), 3, 4, 6, generator=torch.Generator().manual_seed(0))
    with caplog.at_level(logging.WARNING, logger="torch_wanops.compile"):
        assert torch_wanops.prewarm(vae, tuple(z.shape)) is True
        decodes = [_decode(vae, z) for _ in range(2)]
    expected = _decode(stock, z)
    assert all(got.stride() == expected.stride() and torch.equal(got, expected) for got in decodes)
    one_decode = [True, False, False]
    if exact:
        assert compiled_chunks == [] and eager_chunks == one_decode * 3  # prewarm's one decode, then two
        assert caplog.text.count(warning) == 1
    else:
        # prewarm's first decode runs eagerly (the conv checks); its second and the next two run the graphs
        assert eager_chunks == one_decode and compiled_chunks == one_decode * 3
        assert "running the eager lossless path" not in caplog.text
    assert compile_module.is_compiled(vae) is not exact


def test_a_decode_autograd_records_runs_stocks_modules_not_the_graphs(monkeypatch, walk_calls):
    """Under compile_vae (torch.compile replaced), a decode whose latents require grad runs no graph and no walk:
    stock's modules, so its output and gradients are stock's; a no-grad decode after it runs the graphs."""
    monkeypatch.setattr(compile_module, "EXACT_STRIDES_TAG", object())  # graphs for CPU fp32 on any torch
    compiled_chunks = []

    def fake_compile(fn, **kwargs):
        return lambda *args: compiled_chunks.append(args[3]) or fn(*args)

    monkeypatch.setattr(compile_module.torch, "compile", fake_compile)
    stock, vae = build_vae("wan2.1-tiny"), build_vae("wan2.1-tiny")
    assert torch_wanops.compile_vae(vae, enabled=True) is True
    z = torch.randn(1, latent_channels("wan2.1-tiny"), 3, 4, 6, generator=torch.Generator().manual_seed(0))
    for _ in range(2):  # the second decode would run the graphs, were autograd not recording
        grads = []
        for model in (stock, vae):
            leaf = z.clone().requires_grad_(True)
            out = model.decode(leaf, return_dict=False)[0]
            out.square().sum().backward()
            grads.append((out, leaf.grad))
        assert torch.equal(grads[1][0], grads[0][0]) and torch.equal(grads[1][1], grads[0][1])
    assert compiled_chunks == [] and walk_calls == []
    for _ in range(2):
        _decode(vae, z)
    assert compiled_chunks == [True, False, False]


@exact_strides_graphs
def test_every_op_asks_compiled_graphs_for_its_inputs_exact_strides():
    """Each op's bits depend on its inputs' strides: each carries the tag, whatever torch's default for custom ops."""
    names = sorted(name.split("::")[1] for name in torch._C._dispatch_get_all_op_names() if name.startswith("wanops::"))
    assert len(names) == 10, names
    tags = {name: getattr(torch.ops.wanops, name).default.tags for name in names}
    assert [name for name in names if compile_module.EXACT_STRIDES_TAG not in tags[name]] == []


def test_compile_vae_rejects_other_objects():
    with pytest.raises(TypeError, match="obj must be a diffusers AutoencoderKLWan"):
        torch_wanops.compile_vae(torch.nn.Linear(2, 2), enabled=True)


# --- real compilation of small decoders -----------------------------------------------------------

# fp32 oneDNN convs of one geometry in two layouts: ~1e-6 measured.
FORCED_LEVER_TOLERANCE = 1e-4


def _decode(vae, z):
    with torch.no_grad():
        return vae.decode(z, return_dict=False)[0]


# Each case compiles two decoders' worth of graphs (~1 min on CI's CPU): both architectures, the
# switch off in one and on (its default) in the other. The tiled decode's two more graphs (a tile shape
# compiles as any latent shape does) only in the default's case: 20-50 s more a case on a 2-core CPU.
@exact_strides_graphs
@pytest.mark.parametrize("arch,frame_major_norms_stock_layout,tiled",
                         [("wan2.1-tiny", False, False), ("wan2.2-tiny", True, True)])
@pytest.mark.slow
def test_compiled_decoder_two_graphs_per_shape_no_breaks(arch, frame_major_norms_stock_layout, tiled, monkeypatch):
    # A limit of 1 would stop Dynamo at the second graph: compile_vae must lift it.
    # fp32 keeps stock's conv layout, where FRAME_MAJOR_NORMS_STOCK_LAYOUT fuses the frame-major norms.
    monkeypatch.setattr(decoder_module, "FRAME_MAJOR_NORMS_STOCK_LAYOUT", frame_major_norms_stock_layout)
    with torch._dynamo.config.patch(**{compile_module.RECOMPILE_LIMIT_SETTING: 1}):
        _compile_small_decoder(arch, tiled)


def _compile_small_decoder(arch, tiled):
    torch._dynamo.reset()
    counters.clear()
    stock = build_vae(arch)
    vae = build_vae(arch)
    assert torch_wanops.compile_vae(vae, fullgraph=True, enabled=True) is True
    z = torch.randn(1, latent_channels(arch), 3, 4, 6, generator=torch.Generator().manual_seed(0))
    assert torch_wanops.prewarm(vae, tuple(z.shape)) is True
    assert counters["stats"]["unique_graphs"] == 2
    got = _decode(vae, z)
    expected = _decode(stock, z)
    assert got.stride() == expected.stride() and torch.equal(got, expected)
    assert counters["stats"]["unique_graphs"] == 2, "prewarm should have compiled every graph"
    assert not counters["graph_break"]
    assert compile_module.is_compiled(vae)

    if tiled:  # one more tile shape, two more graphs, still no fallback
        for model in (stock, vae):
            scale = model.spatial_compression_ratio
            model.enable_tiling(tile_sample_min_height=2 * scale, tile_sample_min_width=2 * scale,
                                tile_sample_stride_height=2 * scale, tile_sample_stride_width=2 * scale)
        got = _decode(vae, z[:, :, :2])
        expected = _decode(stock, z[:, :, :2])
        assert torch.equal(got, expected)
        assert counters["stats"]["unique_graphs"] == 4
        assert not counters["graph_break"]
        assert compile_module.is_compiled(vae)

    torch_wanops.restore(vae)
    assert type(vae.decoder).__name__ == "WanDecoder3d" and "forward" not in vae.decoder.__dict__


@contextlib.contextmanager
def _cache_slots_per_chunk(decoder):
    """Per chunk decoded in the block: (the cache slots holding a tensor before it, those holding the same
    tensor after it), through a wrapper around the decoder's installed forward."""
    forward, slots = decoder.forward, []

    def record(x, feat_cache=None, feat_idx=[0], first_chunk=False):  # noqa: B006 - the stock signature
        before = list(feat_cache)
        out = forward(x, feat_cache, feat_idx, first_chunk)
        tensors = [slot for slot, entry in enumerate(before) if isinstance(entry, torch.Tensor)]
        slots.append((len(tensors), sum(feat_cache[slot] is before[slot] for slot in tensors)))
        return out

    decoder.forward = record
    try:
        yield slots
    finally:
        decoder.forward = forward


def _assert_compiled_decode_gives_stock_bits(arch, dtype, latent_size, device="cpu", exact=True):
    """Stock's bits, and graphs that write every later chunk's caches over the old ones (refresh_cache)."""
    torch._dynamo.reset()
    stock = build_vae(arch, dtype=dtype, device=device)
    vae = build_vae(arch, dtype=dtype, device=device)
    assert torch_wanops.compile_vae(vae, enabled=True, exact=exact) is True
    z = torch.randn(1, latent_channels(arch), 3, *latent_size, generator=torch.Generator().manual_seed(0))
    z = z.to(device, dtype)
    # On CPU the ops run their reference code: the interpreter rounds bf16 otherwise (conftest).
    with torch_wanops.reference_kernels() if device == "cpu" else contextlib.nullcontext():
        assert torch_wanops.prewarm(vae, tuple(z.shape)) is True
        with _cache_slots_per_chunk(vae.decoder) as slots:
            got = _decode(vae, z)
        expected = _decode(stock, z)
    assert compile_module.is_compiled(vae)
    assert got.stride() == expected.stride() and torch.equal(got, expected)
    assert slots[0] == (0, 0) and all(tensors > 0 and kept == tensors for tensors, kept in slots[1:]), slots


# torch 2.11's Inductor kept these CPU graphs' 16-bit intermediates in fp32 all the same: 93% of the values differed
# from stock (bf16 by up to 0.0625, fp16 0.0081), as compiled stock diffusers' did (0.061, 0.0078) on this 2-core CPU
# (session 48); compile_vae keeps CPU 16-bit chunks eager on every torch (GRAPHS_GIVING_STOCK_BITS).
@pytest.mark.skipif(torch.torch_version.TorchVersion(torch.__version__) < "2.13",
                    reason="torch < 2.13's CPU graphs do not round 16-bit intermediates as eager "
                           "(measured: 2.11, 2.12.1)")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.slow
def test_compiled_16_bit_decode_gives_stock_bits_on_cpu(dtype):
    """16-bit graphs round their intermediates where eager does (emulate_precision_casts): without it,
    Inductor's fused adds kept them in fp32 and a bf16 decode differed from stock by 0.0625. The ops
    run their reference code, as the interpreter rounds bf16 otherwise (conftest). exact=False: the
    pair is not in GRAPHS_GIVING_STOCK_BITS, as a CPU with bf16 instructions rounded otherwise."""
    _assert_compiled_decode_gives_stock_bits("wan2.1-tiny", dtype, (4, 6), exact=False)


# ~2 min on CI's CPU, mostly compiling the real decoder's graphs: 4x4 latents (64x64 pixels) keep every stage, and
# a stock decode there takes ~1/4 of the time of one at 8x8 (15 s against 55 s, session 62). Not bf16: on a CPU
# with bf16 instructions (the H200 host, gpu-logs/session25/B) the real Wan2.1 bf16 graphs differed from stock, so
# compile_vae keeps CPU 16-bit chunks eager (GRAPHS_GIVING_STOCK_BITS); on one without them (CI's) ATen's slow bf16
# path takes minutes per decode.
@exact_strides_graphs
@pytest.mark.slow
def test_compiled_real_config_decode_gives_stock_bits_on_cpu():
    """The real Wan2.2 decoder (its channel counts, 1024 wide norms and attention), compiled, on small
    latents: stock's bits on CPU in fp32."""
    _assert_compiled_decode_gives_stock_bits("wan2.2", torch.float32, (4, 4))


# 76 s for both architectures in one dtype on an H200 (session 23), mostly compilation.
@exact_strides_graphs
@cuda
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("arch,latent_size", [("wan2.1", (60, 104)), ("wan2.2", (30, 52))], ids=str)
def test_compiled_real_config_16_bit_decode_gives_stock_bits_on_cuda(arch, latent_size, dtype):
    """The real decoders compiled on CUDA at a 480x832 video's latent size, where small latents hid two
    differences (H200, gpu-logs/session22): Inductor reducing the norm after the attention itself, and the
    attention's output laid out as its fake says (channels-last) where cuDNN's eager output is contiguous."""
    _assert_compiled_decode_gives_stock_bits(arch, dtype, latent_size, device="cuda")


# A compiled fp32 CUDA decode (exact=False) against stock, max |diff|: not bit-exact, Inductor's generated
# code is about an ulp off and TF32 convs magnify it (H200, gpu-logs/session24/A, D: 0.0033 on
# wan2.1-tiny, 0.0013 on wan2.2-tiny; 9.5e-7 with TF32 off). bf16 and fp16 give stock's bits, since the
# graphs round as eager does (emulate_precision_casts; fp16 measured in gpu-logs/session25/A).
CUDA_COMPILED_TOLERANCE = 1e-2


@exact_strides_graphs
@cuda
@pytest.mark.parametrize("arch", ["wan2.1-tiny", "wan2.2-tiny"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32], ids=str)
def test_compiled_decode_on_cuda_takes_the_levers(arch, dtype, monkeypatch, capsys):
    """compile_vae on CUDA with exact=False (fp32 graphs run too): no fallback, no graph break, two
    graphs; the graphs take the eager checks' verdicts (bias epilogues of the channels-last convs run);
    bf16 and fp16 give stock's bits, fp32 stays near them. With exact (the default) fp32 decodes
    eagerly, with stock's bits."""
    bias_module = importlib.import_module("torch_wanops.ops.bias_add_contiguous")
    calls, check = [], bias_module.check_bias_add_contiguous_args
    monkeypatch.setattr(bias_module, "check_bias_add_contiguous_args", lambda *args: calls.append(1) or check(*args))
    torch._dynamo.reset()
    counters.clear()
    stock = build_vae(arch, dtype=dtype, device="cuda")
    vae = build_vae(arch, dtype=dtype, device="cuda")
    z = torch.randn(1, latent_channels(arch), 3, 8, 12, generator=torch.Generator().manual_seed(0)).to("cuda", dtype)
    expected = _decode(stock, z)
    assert torch_wanops.compile_vae(vae, enabled=True) is True
    assert compile_module.is_compiled(vae) is (dtype != torch.float32)
    default = _decode(vae, z)
    assert default.stride() == expected.stride() and torch.equal(default, expected)
    torch._dynamo.reset()
    counters.clear()
    assert torch_wanops.compile_vae(vae, enabled=True, exact=False) is True
    assert torch_wanops.prewarm(vae, tuple(z.shape)) is True
    assert counters["stats"]["unique_graphs"] == 2
    calls.clear()
    got = _decode(vae, z)
    assert calls and compile_module.is_compiled(vae) and not counters["graph_break"]
    assert counters["stats"]["unique_graphs"] == 2
    difference = (got.float() - expected.float()).abs().max().item()
    with capsys.disabled():
        print(f"compiled {arch} {dtype} on CUDA: max |diff| {difference:.3g} against stock")
    assert got.stride() == expected.stride()
    assert torch.equal(got, expected) if dtype != torch.float32 else difference <= CUDA_COMPILED_TOLERANCE


@exact_strides_graphs
@pytest.mark.slow
def test_compiled_graphs_take_the_eager_verdicts_and_watch_tf32(monkeypatch, caplog):
    """Each chunk signature's first call runs eagerly, and so do the chunks after it in that decode;
    the next decode compiles; a graph reads the verdicts recorded by then (an unchecked geometry:
    stock's layout), and a TF32 change sends the decoder to eager.

    The lever is offered on CPU and its checks refuse it, forced: where oneDNN gives both layouts the same
    bits (an AVX-512 CPU), the real check accepts some geometries, whose convs the CPU graphs then round otherwise
    (~4e-6; outside tests the lever is CUDA's alone). Every path stays exact, so each decode gives the eager one's
    bits."""
    monkeypatch.setattr(decoder_module, "_channels_last_convs_supported", lambda x: True)
    monkeypatch.setattr(decoder_module, "_lever_gives_stock_bits", lambda *args: False)
    monkeypatch.setattr(decoder_module, "_channels_last_conv_verdicts", {})
    monkeypatch.setattr(decoder_module, "_chunked_conv_verdicts", {})
    torch._dynamo.reset()
    counters.clear()
    vae = build_vae("wan2.1-tiny")
    assert torch_wanops.compile_vae(vae, enabled=True) is True
    compiled = vae.decoder.forward.call
    compiled_calls = []
    real_compiled = compiled._compiled
    monkeypatch.setattr(compiled, "_compiled", lambda *args: compiled_calls.append(args[3]) or real_compiled(*args))
    z = torch.randn(1, latent_channels("wan2.1-tiny"), 3, 4, 6, generator=torch.Generator().manual_seed(0))
    eager = _decode(vae, z)
    # Chunks 0 and 1 (each its own signature) ran eagerly and recorded the verdicts; chunk 2, after
    # an eager chunk, too. The next decode compiles a graph per signature.
    assert compiled_calls == [] and counters["stats"]["unique_graphs"] == 0
    assert torch.equal(_decode(vae, z), eager)
    assert compiled_calls == [True, False, False] and counters["stats"]["unique_graphs"] == 2
    verdicts = dict(decoder_module._channels_last_conv_verdicts)
    assert verdicts and not all(verdicts.values())
    recorded = []
    real_lookup = decoder_module._verdicts_of
    monkeypatch.setattr(decoder_module, "_verdicts_of", torch.compiler.assume_constant_result(
        lambda *key: recorded.append((verdicts.get(decoder_module.ConvGeometry(*key)), real_lookup(*key)))
        or real_lookup(*key)))
    torch._dynamo.reset()
    assert torch.equal(_decode(vae, z), eager)
    assert recorded and all(pair == (eager_verdict, None) for eager_verdict, pair in recorded)
    # A geometry no eager call checked keeps stock's layout in the graph.
    decoder_module._channels_last_conv_verdicts.clear()
    recorded.clear()
    torch._dynamo.reset()
    assert torch.equal(_decode(vae, z), eager)
    assert recorded and all(pair == (None, None) for _, pair in recorded)
    # cuDNN's TF32 setting, read by the graphs when traced, changed: eager from then on.
    tf32 = _backend.fp32_convs_in_tf32()
    monkeypatch.setattr(_backend, "fp32_convs_in_tf32", lambda: not tf32)
    compiled_calls.clear()
    with caplog.at_level(logging.WARNING, logger="torch_wanops.compile"):
        assert torch.equal(_decode(vae, z), eager)
    assert "TF32 setting changed" in caplog.text and not compile_module.is_compiled(vae) and not compiled_calls


@exact_strides_graphs
@pytest.mark.parametrize(
    "arch,frame_major_norm_inputs,fused_residual_adds,fused_upsample,contiguous_upsampler_outputs,"
    "raw_conv_output_norms,fused_shortcut_biases",
    # Each case compiles a decoder (~1 min on CI's CPU): every switch off; every switch on but the contiguous
    # upsampler outputs, so that the frame-major paths take the lever; every switch on (Wan2.2: its DupUp3D
    # shortcuts in the upsamplers' epilogues too).
    [("wan2.1-tiny", False, False, False, False, False, False), ("wan2.1-tiny", True, True, True, False, True, True),
     ("wan2.2-tiny", True, True, True, True, True, True)],
)
@pytest.mark.slow
def test_compiled_conv_layout_lever_traces_without_breaks(monkeypatch, arch, frame_major_norm_inputs,
                                                          fused_residual_adds, fused_upsample,
                                                          contiguous_upsampler_outputs, raw_conv_output_norms,
                                                          fused_shortcut_biases):
    """The CUDA-only conv-layout lever (channels-last conv input, bias_add_contiguous) traces fullgraph.

    Forced on for CPU fp32 here (the package takes it for CUDA only), its check forced to pass, the
    compiled decode takes the verdicts of the eager one and must give its bits; so with the
    upsamplers' frame-major outputs taking it too (FRAME_MAJOR_NORM_INPUTS), and with the residual
    adds in its epilogue (FUSED_RESIDUAL_ADDS), and with the upsamplers' Conv2d outputs handed on
    contiguous (CONTIGUOUS_UPSAMPLER_OUTPUTS), and with the residual blocks' conv1 outputs going raw
    to the norm that adds their bias (RAW_CONV_OUTPUT_NORMS), and with the shortcut convs' biases
    added in conv2's epilogue (FUSED_SHORTCUT_BIASES, forced past its cuDNN-only condition), and
    Wan2.2's DupUp3D shortcuts added in the upsamplers' epilogues (FUSED_DUP_UP3D_ADDS).
    """

    bias_module = importlib.import_module("torch_wanops.ops.bias_add_contiguous")  # the package re-exports the op
    rms_module = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d")
    upsample_module = importlib.import_module("torch_wanops.ops.upsample_nearest_2x")

    monkeypatch.setattr(decoder_module, "_channels_last_convs_supported", lambda x: True)
    monkeypatch.setattr(decoder_module, "_channels_last_conv_verdicts", {})  # each case checks its geometries anew
    monkeypatch.setattr(decoder_module, "FRAME_MAJOR_NORM_INPUTS", frame_major_norm_inputs)
    monkeypatch.setattr(decoder_module, "FUSED_RESIDUAL_ADDS", fused_residual_adds)
    monkeypatch.setattr(decoder_module, "FUSED_UPSAMPLE", fused_upsample)
    monkeypatch.setattr(decoder_module, "CONTIGUOUS_UPSAMPLER_OUTPUTS", contiguous_upsampler_outputs)
    monkeypatch.setattr(decoder_module, "RAW_CONV_OUTPUT_NORMS", raw_conv_output_norms)
    monkeypatch.setattr(decoder_module, "FUSED_SHORTCUT_BIASES", fused_shortcut_biases)
    monkeypatch.setattr(decoder_module, "_bias_added_after_conv", lambda x: True)
    # The check forced to pass: oneDNN's bits differ between layouts, and the graphs take eager's verdicts.
    monkeypatch.setattr(decoder_module, "_same_bits", lambda a, b: True)
    # calls: whether each bias_add_contiguous call had a residual (shortcut_biased: and its bias; dup_added: a
    # DupUp3D source as its residual); biased: whether each norm added a bias
    calls, shortcut_biased, dup_added, frame_major, upsampled, biased = [], [], [], [], [], []
    check = bias_module.check_bias_add_contiguous_args
    monkeypatch.setattr(bias_module, "check_bias_add_contiguous_args",
                        lambda x, bias, residual, residual_bias, *dup: calls.append(residual is not None)
                        or shortcut_biased.append(residual_bias is not None) or dup_added.append(tuple(dup[:3]) != (1, 1, 1))
                        or check(x, bias, residual, residual_bias, *dup))
    check_norm = rms_module.check_rms_norm_cat_pad_5d_args
    monkeypatch.setattr(rms_module, "check_rms_norm_cat_pad_5d_args",
                        lambda x, *args: frame_major.append(is_frame_major(x)) or biased.append(args[7] is not None)
                        or check_norm(x, *args))
    check_upsample = upsample_module.check_upsample_nearest_2x_args
    monkeypatch.setattr(upsample_module, "check_upsample_nearest_2x_args",
                        lambda x, channels_last: upsampled.append(channels_last) or check_upsample(x, channels_last))
    torch._dynamo.reset()
    counters.clear()
    vae = torch_wanops.apply_to(build_vae(arch))
    z = torch.randn(1, latent_channels(arch), 2, 4, 6, generator=torch.Generator().manual_seed(0))
    eager = _decode(vae, z)
    dup_fused = "2.2" in arch and fused_upsample and contiguous_upsampler_outputs
    assert calls, "the lever did not run in eager"
    assert any(dup_added) == dup_fused
    assert any(frame_major) == (frame_major_norm_inputs and not contiguous_upsampler_outputs)
    assert bool(upsampled) == fused_upsample and all(upsampled)  # channels-last Conv2d input
    assert any(biased) == raw_conv_output_norms
    assert any(shortcut_biased) == fused_shortcut_biases
    assert torch_wanops.compile_vae(vae, fullgraph=True, enabled=True) is True
    assert torch_wanops.prewarm(vae, tuple(z.shape)) is True
    for recorded in (calls, shortcut_biased, dup_added, frame_major, upsampled, biased):
        recorded.clear()
    got = _decode(vae, z)
    assert calls, "the compiled decode did not run bias_add_contiguous"
    assert any(dup_added) == dup_fused
    assert any(calls) == fused_residual_adds
    assert any(frame_major) == (frame_major_norm_inputs and not contiguous_upsampler_outputs)
    assert any(upsampled) == fused_upsample
    assert any(biased) == raw_conv_output_norms
    assert any(shortcut_biased) == fused_shortcut_biases
    # Not torch.equal: the trace's fake strides of the attention's one-frame output differ from eager's
    # in its frame stride, so the next residual block's norm takes the other exact path (the fused op or
    # the stock modules); with the lever forced past its check on CPU, oneDNN's bits differ between them.
    assert (got - eager).abs().max().item() <= FORCED_LEVER_TOLERANCE
    assert counters["stats"]["unique_graphs"] == 2
    assert not counters["graph_break"]
    assert compile_module.is_compiled(vae)


# --- prewarm ------------------------------------------------------------------------------------


def test_prewarm_eager_and_bare_decoder(caplog):
    vae = torch_wanops.apply_to(build_vae("wan2.1-tiny"))
    with caplog.at_level(logging.INFO, logger="torch_wanops"):
        assert torch_wanops.prewarm(vae, (1, 4, 2, 3, 3)) is True
    assert re.search(r"prewarm at latent shape \(1, 4, 2, 3, 3\) done in \d+\.\d s", caplog.text), caplog.text
    assert torch_wanops.prewarm(vae.decoder, (1, 4, 2, 3, 3), dtype=torch.float32, device="cpu") is True


def test_prewarm_failure_is_logged_not_raised(monkeypatch, caplog):
    vae = torch_wanops.apply_to(build_vae("wan2.1-tiny"))

    def broken(*args, **kwargs):
        raise RuntimeError("CUDA out of memory (simulated)")

    monkeypatch.setattr(vae, "decode", broken)
    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        assert torch_wanops.prewarm(vae, (1, 4, 2, 3, 3)) is False
    assert "serving will continue" in caplog.text


@pytest.mark.parametrize("shape,error,message", [
    ((1, 4, 2, 3), ValueError, "latent_shape must be 5 positive ints"),
    ((1, 4, 0, 3, 3), ValueError, "latent_shape must be 5 positive ints"),
    ("1,4,2,3,3", TypeError, "latent_shape must be a sequence"),
])
def test_prewarm_rejects_bad_shapes(shape, error, message):
    with pytest.raises(error, match=message):
        torch_wanops.prewarm(build_vae("wan2.1-tiny"), shape)


@pytest.mark.parametrize("bare_decoder", [False, True])
def test_prewarm_rejects_latents_of_another_channel_count(bare_decoder, caplog):
    vae = torch_wanops.apply_to(build_vae("wan2.1-tiny"))
    channels = latent_channels("wan2.1-tiny")
    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        with pytest.raises(ValueError, match=f"latent_shape must have the VAE's {channels} latent channels"):
            torch_wanops.prewarm(vae.decoder if bare_decoder else vae, (1, channels + 1, 2, 3, 3))
    assert "serving will continue" not in caplog.text


@pytest.mark.parametrize("argument,error,message", [
    ({"dtype": "bf16"}, TypeError, "dtype must be a torch.dtype"),
    ({"dtype": torch.int32}, ValueError, "dtype must be a floating-point dtype .* got torch.int32"),
    ({"device": 0.5}, TypeError, "device must be a torch.device, a str or None, got float"),
    ({"device": "gpu"}, ValueError, "device must name a torch device .* got 'gpu'"),
])
def test_prewarm_rejects_bad_dtype_and_device(argument, error, message, caplog):
    """The caller's errors, raised: not logged as a failed decode that serving would go on past."""
    with caplog.at_level(logging.WARNING, logger="torch_wanops"):
        with pytest.raises(error, match=message):
            torch_wanops.prewarm(build_vae("wan2.1-tiny"), (1, 4, 2, 3, 3), **argument)
    assert "serving will continue" not in caplog.text


def test_prewarm_rejects_bad_object():
    with pytest.raises(TypeError, match="obj must be a diffusers AutoencoderKLWan"):
        torch_wanops.prewarm(object(), (1, 4, 2, 3, 3))
