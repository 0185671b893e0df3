"""Compile the per-chunk Wan decoder forward, with an eager fallback, an on/off switch and prewarm.

Granularity matters (see ``../shared/notes/baseline-h200.md`` in the project): the
frame loop in ``AutoencoderKLWan._decode`` is left eager and only the decoder's
per-chunk forward is compiled, wanops ops included (Dynamo sees them through their
fake implementations, so there is no graph break). A decode then needs two graphs
per latent shape: the first chunk and every later chunk.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch._inductor.config

from diffusers.models.autoencoders.autoencoder_kl_wan import WanCausalConv3d

from torch_wanops import _backend
from torch_wanops.apply import COMPILED_FORWARD_MARK, apply_to, find_decoder, find_vae, is_compiled_forward
from torch_wanops.configs import check_device
from torch_wanops.decoder import OmniWanDecoder, neutral_autocast_set_aside, runs_stock_decoder
from torch_wanops.ops._common import EXACT_STRIDES_TAG

logger = logging.getLogger(__name__)

ENV_SWITCH = "WANOPS_COMPILE_VAE"
_TRUE = ("1", "true", "yes")
_FALSE = ("0", "false", "no")
# Tiled decode meets a few tile shapes, two graphs each; keep Dynamo from giving up on them.
_RECOMPILE_LIMIT = 64

# The (device type, dtype) pairs whose compiled decoder graphs gave stock's bits: CPU in fp32
# (tests/test_compile.py), CUDA in bf16 and fp16 (an H200, both architectures, 480x832 latents
# included; docs/exactness.md). fp32 CUDA graphs round otherwise: Inductor's generated code is about an ulp off
# (9.5e-7 on the small configs with cuDNN's TF32 off), and TF32's rounding of the next conv's input
# magnifies that (0.0037 with it on; Wan2.1 480x832 in session 10: 0.0026 / 73.3 dB, where compiled
# stock diffusers gives 0.0029 / 73.1 dB). 16-bit CPU graphs depend on the CPU: stock's bits on one
# without bf16 instructions (CI's), not for the real Wan2.1 bf16 config on one with them (the H200
# host, gpu-logs/session25/B).
GRAPHS_GIVING_STOCK_BITS = frozenset({
    ("cpu", torch.float32),
    ("cuda", torch.bfloat16),
    ("cuda", torch.float16),
})


def graphs_give_stock_bits(device_type: str, dtype: torch.dtype) -> bool:
    """Whether compiled decoder graphs are known to give stock's bits here for ``device_type`` and ``dtype``: a pair
    of GRAPHS_GIVING_STOCK_BITS, under a torch whose graphs hand the ops their inputs' exact strides (torch >= 2.8:
    ops._common.EXACT_STRIDES_TAG; under torch 2.6 a compiled norm got a contiguous input eager had channels-last)."""
    return EXACT_STRIDES_TAG is not None and (device_type, dtype) in GRAPHS_GIVING_STOCK_BITS


class _CompiledWithFallback:
    """Calls the compiled callable until it raises once, then the eager one for good."""

    def __init__(self, eager: Callable[..., Any], compiled: Callable[..., Any], label: str) -> None:
        self._eager = eager
        self._compiled: Callable[..., Any] | None = compiled
        self._label = label
        self._lock = threading.Lock()

    @property
    def compiled_active(self) -> bool:
        return self._compiled is not None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self._compiled
        if compiled is None:
            return self._eager(*args, **kwargs)
        try:
            return compiled(*args, **kwargs)
        except Exception as exc:
            self.fall_back(f"compiled call failed ({type(exc).__name__}: {exc}); disabling compilation and retrying eagerly")
            return self._eager(*args, **kwargs)

    def fall_back(self, reason: str) -> None:
        """Run the eager callable from now on; the first call logs ``reason``."""
        with self._lock:
            first = self._compiled is not None
            self._compiled = None
        if first:
            logger.warning("%s: %s.", self._label, reason)


def compile_callable_with_fallback(
    fn: Callable[..., Any], *, label: str, **compile_kwargs: Any
) -> tuple[Callable[..., Any], bool]:
    """``torch.compile(fn, **compile_kwargs)`` that can never break the caller.

    Returns ``(fn, False)`` if ``torch.compile`` itself raises. Otherwise returns a
    wrapper and ``True``: the wrapper runs the compiled callable, and the first time
    that raises it logs a warning, returns ``fn``'s result, and runs ``fn`` from then on.
    A non-callable ``fn`` or a non-str ``label`` is the caller's error and raises ``TypeError``.
    """
    if not callable(fn):
        raise TypeError(f"fn must be callable, got {type(fn).__name__}")
    if not isinstance(label, str):
        raise TypeError(f"label must be a str, got {type(label).__name__}")
    try:
        compiled = torch.compile(fn, **compile_kwargs)
    except Exception as exc:
        logger.warning("%s: torch.compile failed (%s: %s); continuing eagerly.", label, type(exc).__name__, exc)
        return fn, False
    return _CompiledWithFallback(fn, compiled, label), True


def compile_enabled_from_env() -> bool:
    """The ``WANOPS_COMPILE_VAE`` switch: 1/0/true/false/yes/no, any case; unset means on."""
    raw = os.environ.get(ENV_SWITCH)
    if raw is None:
        return True
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"{ENV_SWITCH} must be one of 1/0/true/false/yes/no (any case), got {raw!r}")


# Dynamo's setting for how many graphs one frame may compile; torch < 2.7 calls it cache_size_limit.
RECOMPILE_LIMIT_SETTING = "recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit") else "cache_size_limit"


def recompile_headroom() -> Any:
    """A context in which Dynamo's recompile limit is at least _RECOMPILE_LIMIT."""
    current = getattr(torch._dynamo.config, RECOMPILE_LIMIT_SETTING)
    return torch._dynamo.config.patch(**{RECOMPILE_LIMIT_SETTING: max(current, _RECOMPILE_LIMIT)})


# Inductor settings for the decoder's graphs (those this torch has):
# - the convolutions as eager runs them, ATen's in their layouts: the graphs take the verdicts of eager
#   conv checks, which hold for the layouts and kernels those saw. The layout optimization hands convs
#   channels-last inputs and weights, and max-autotune may swap in Triton convs or GEMMs: either changes
#   which conv kernels run, and with them the bits (a compiled CPU decode with the layout optimization
#   differed from stock by ~1e-6);
# - 16-bit intermediates rounded where eager rounds them: fused, Inductor kept them in fp32 (a compiled
#   bf16 CPU decode differed from stock by 0.0625, and gave its bits with the rounding).
_GRAPH_SETTINGS = {
    "layout_optimization": False,
    "max_autotune_conv_backends": "ATEN",
    "conv_1x1_as_mm": False,
    "emulate_precision_casts": True,
}


def graph_settings() -> Any:
    """A context with the Inductor settings the decoder's graphs are compiled under (_GRAPH_SETTINGS)."""
    config = torch._inductor.config
    return config.patch(**{name: value for name, value in _GRAPH_SETTINGS.items() if hasattr(config, name)})


class _ChunkForward:
    """The per-chunk decoder forward that compile_vae installs on the decoder instance.

    The first call of each chunk signature (shape, strides, dtype, device, first chunk or not) runs
    eagerly: the per-geometry conv checks (layout, chunked conv) run there and record their
    verdicts, which the graph compiled on the signature's next call takes (they cannot run
    while Dynamo traces). With ``exact``, chunks of a device and dtype outside
    GRAPHS_GIVING_STOCK_BITS always run eagerly, as do those that decoder.runs_stock_decoder sends to stock's
    forward (autocast that changes stock's arithmetic, autograd recording the decode, an installed forward the walk
    does not mirror); an autocast that leaves the decode alone is set aside (decoder.neutral_autocast_set_aside).
    The chunks after an eager one in the same decode run eagerly too: a graph traced on caches an eager chunk
    wrote would guard on their strides, which compiled chunks may lay out otherwise (they did after the attention, before
    its output took eager's layout in graphs: decoder._in_eager_layout), and a decode would need
    one more graph. The graphs read cuDNN's TF32 setting when traced: after a change, the decoder
    runs eagerly for good (exact either way).
    """

    def __init__(
        self, decoder: OmniWanDecoder, mode: str, fullgraph: bool, dynamic: bool | None, exact: bool
    ) -> None:
        setattr(self, COMPILED_FORWARD_MARK, True)  # restore() removes only a forward marked so
        self.label = f"torch_wanops {type(decoder).__name__}.forward"
        self.decoder = decoder
        self.eager = decoder.decode_chunk
        self.exact = exact
        self.call, self.active = compile_callable_with_fallback(
            decoder.decode_chunk, label=self.label, mode=mode, fullgraph=fullgraph, dynamic=dynamic
        )
        self._kept_eager: set[tuple[str, torch.dtype]] = set()  # pairs already logged as kept eager
        self._checked: set[tuple] = set()
        self._caches_from_eager = False  # whether an eager chunk of the running decode wrote feat_cache
        self._tf32_when_compiled: bool | None = None

    def __call__(
        self,
        x: torch.Tensor,
        feat_cache: list[Any] | None = None,
        feat_idx: list[int] = [0],  # noqa: B006 - the stock signature
        first_chunk: bool = False,
    ) -> torch.Tensor:
        with neutral_autocast_set_aside((self.decoder,), x):
            return self._forward(x, feat_cache, feat_idx, first_chunk)

    def _forward(self, x: torch.Tensor, feat_cache: list[Any] | None, feat_idx: list[int], first_chunk: bool
                 ) -> torch.Tensor:
        if self._keeps_eager(x.device, x.dtype) or runs_stock_decoder(self.decoder, x, feat_cache):
            return self.eager(x, feat_cache, feat_idx, first_chunk, True)
        signature = (tuple(x.shape), x.stride(), x.dtype, x.device, bool(first_chunk), feat_cache is None)
        caching = feat_cache is not None
        if caching and (first_chunk or all(entry is None for entry in feat_cache)):
            self._caches_from_eager = False  # a new decode
        if signature not in self._checked or (caching and self._caches_from_eager):
            out = self.eager(x, feat_cache, feat_idx, first_chunk, True)
            self._checked.add(signature)
            self._caches_from_eager = caching
            return out
        tf32 = _backend.fp32_convs_in_tf32()
        if self._tf32_when_compiled is None:
            self._tf32_when_compiled = tf32
        elif tf32 != self._tf32_when_compiled and isinstance(self.call, _CompiledWithFallback):
            self.call.fall_back("cuDNN's TF32 setting changed since the decoder was compiled; running it eagerly")
        with recompile_headroom(), graph_settings():
            return self.call(x, feat_cache, feat_idx, first_chunk, True)

    def compiles(self, device: torch.device, dtype: torch.dtype) -> bool:
        """Whether chunks on ``device`` in ``dtype`` run the compiled graphs: not fallen back to eager,
        and not kept eager by ``exact``."""
        return getattr(self.call, "compiled_active", False) and not self._keeps_eager(device, dtype, log=False)

    def _keeps_eager(self, device: torch.device, dtype: torch.dtype, log: bool = True) -> bool:
        """With ``exact``, whether graphs_give_stock_bits says no for the pair (warned once per pair)."""
        pair = (device.type, dtype)
        if not self.exact or graphs_give_stock_bits(*pair):
            return False
        if log and pair not in self._kept_eager:
            self._kept_eager.add(pair)
            reason = (f"torch {torch.__version__} cannot make them hand the ops their inputs' exact strides "
                      "(torch >= 2.8 can)" if EXACT_STRIDES_TAG is None else
                      f"they are not known to give stock's bits for {dtype} on {device.type}")
            logger.warning(
                "%s: compiled graphs: %s; running the eager lossless path (compile_vae(..., exact=False) compiles "
                "them anyway).", self.label, reason,
            )
        return True


def compile_vae(
    obj: Any,
    *,
    mode: str = "default",
    fullgraph: bool = True,
    dynamic: bool | None = False,
    enabled: bool | None = None,
    exact: bool = True,
) -> bool:
    """Compile ``obj``'s Wan decoder per chunk (applying OmniWanDecoder first); returns whether compilation is on.

    ``obj`` is anything :func:`torch_wanops.apply_to` takes. ``enabled=None`` reads
    ``WANOPS_COMPILE_VAE``. Disabled, the decoder still runs the lossless eager ops.
    With ``exact`` (the default) only chunks whose device and dtype the compiled graphs gave
    stock's bits for run them (GRAPHS_GIVING_STOCK_BITS: fp32 on CPU, bf16 and fp16 on CUDA); the
    others run the eager lossless path, with a warning. ``exact=False`` compiles every chunk: fp32 CUDA
    graphs then differ from stock eager about as compiled stock diffusers does (Inductor's generated
    code is about an ulp off, and cuDNN's TF32 convs magnify it: 0.0026 max |diff|, 73.3 dB, at Wan2.1
    480x832, compiled stock 0.0029, 73.1 dB). docs/exactness.md gives what was measured, per dtype and device.
    """
    if enabled is None:
        enabled = compile_enabled_from_env()
    elif not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool or None, got {type(enabled).__name__}")
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str, got {type(mode).__name__}")
    modes = torch._inductor.list_mode_options()
    if mode not in modes:  # torch.compile would refuse it too, and the decoder would silently stay eager
        raise ValueError(f"mode must be one of torch.compile's modes ({', '.join(modes)}), got {mode!r}")
    if not isinstance(fullgraph, bool):
        raise TypeError(f"fullgraph must be a bool, got {type(fullgraph).__name__}")
    if dynamic is not None and not isinstance(dynamic, bool):
        raise TypeError(f"dynamic must be a bool or None, got {type(dynamic).__name__}")
    if not isinstance(exact, bool):
        raise TypeError(f"exact must be a bool, got {type(exact).__name__}")
    decoder = find_decoder(apply_to(obj))
    if is_compiled_forward(decoder.__dict__.get("forward")):
        del decoder.forward
    elif "forward" in decoder.__dict__:
        # A hook (offloading, layerwise casting) owns the decoder's forward: compiling
        # around it would drop the hook, so the decoder stays eager and exact.
        logger.warning("torch_wanops: the decoder's forward is wrapped by a hook; not compiling it.")
        return False
    if not enabled:
        logger.info("torch_wanops: %s is off; the decoder runs the eager lossless path.", ENV_SWITCH)
        return False
    chunk_forward = _ChunkForward(decoder, mode, fullgraph, dynamic, exact)
    if chunk_forward.active:
        decoder.forward = chunk_forward
    return chunk_forward.active


def is_compiled(obj: Any) -> bool:
    """Whether ``obj``'s decoder runs compiled graphs on its parameters' device and dtype: a compiled
    forward that has not fallen back to eager, and (with ``exact``) a pair its graphs give stock's bits for."""
    decoder = find_decoder(obj)
    parameter = next(decoder.parameters())
    return _runs_graphs(decoder, parameter.device, parameter.dtype)


def _runs_graphs(decoder: torch.nn.Module, device: torch.device, dtype: torch.dtype) -> bool:
    forward = decoder.__dict__.get("forward")
    return is_compiled_forward(forward) and forward.compiles(device, dtype)


def _check_latent_shape(latent_shape: Sequence[int]) -> tuple[int, ...]:
    if not isinstance(latent_shape, (tuple, list, torch.Size)):
        raise TypeError(f"latent_shape must be a sequence of 5 ints (B, C, T, H, W), got {type(latent_shape).__name__}")
    if len(latent_shape) != 5 or not all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in latent_shape
    ):
        raise ValueError(f"latent_shape must be 5 positive ints (B, C, T, H, W), got {tuple(latent_shape)}")
    return tuple(latent_shape)


def prewarm(
    obj: Any,
    latent_shape: Sequence[int],
    *,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
) -> bool:
    """Decode random latents of ``latent_shape``, so checks, compilation and autotuning happen before traffic.

    A decoder that runs compiled graphs for ``dtype`` on ``device`` decodes twice: the first decode
    runs each chunk shape eagerly (the conv checks), the second compiles its graphs. Use at least
    two latent frames to warm both graphs (first chunk, later chunks). Returns whether the decodes
    succeeded; a failure of the decodes is logged, never raised. Invalid arguments raise (``latent_shape``
    not 5 positive ints or not of the VAE's latent channels, ``dtype`` not a floating-point dtype, ``device`` not a
    device, ``obj`` not a Wan VAE).
    """
    shape = _check_latent_shape(latent_shape)
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype or None, got {type(dtype).__name__}")
    if dtype is not None and not dtype.is_floating_point:
        raise ValueError(f"dtype must be a floating-point dtype (latents), got {dtype}")
    device = check_device(device)
    decoder = find_decoder(obj)
    vae = find_vae(obj)
    # Checked here, not left to the decode: the failure below is logged, and a wrong channel count is the
    # caller's error, not a serving condition.
    channels = (decoder.conv_in if vae is None else vae.post_quant_conv).in_channels
    if shape[1] != channels:
        raise ValueError(f"latent_shape must have the VAE's {channels} latent channels (B, C, T, H, W), got {shape}")
    parameter = next(decoder.parameters())
    dtype = dtype or parameter.dtype
    device = device if device is not None else parameter.device
    start = time.perf_counter()
    try:
        generator = torch.Generator(device="cpu").manual_seed(0)
        latents = torch.randn(shape, generator=generator).to(device=device, dtype=dtype)
        # no_grad, as diffusers pipelines decode: inference_mode would warm other graphs.
        with torch.no_grad():
            for _ in range(2 if _runs_graphs(decoder, device, dtype) else 1):
                if vae is None:
                    feat_cache: list[Any] = [None] * sum(isinstance(m, WanCausalConv3d) for m in decoder.modules())
                    for index in range(shape[2]):
                        chunk = latents[:, :, index : index + 1]
                        decoder(chunk, feat_cache=feat_cache, feat_idx=[0], first_chunk=index == 0)
                else:
                    vae.decode(latents, return_dict=False)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
    except Exception as exc:
        logger.warning(
            "torch_wanops prewarm at latent shape %s failed (%s: %s); serving will continue.",
            shape,
            type(exc).__name__,
            exc,
        )
        return False
    # A cold start's time is mostly Triton compiling the kernels, which its on-disk cache keeps (README, First decode).
    logger.info("torch_wanops prewarm at latent shape %s done in %.1f s.", shape, time.perf_counter() - start)
    return True
