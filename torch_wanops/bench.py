"""The decode benchmark shared by ``wanops bench`` and ``benchmarks/bench_decode.py``.

One VAE, one set of latents, every variant decoded side by side in one process:
``diffusers-eager`` (stock), ``wanops-eager`` (lossless), and with ``compile=True``
``diffusers-compiled`` (``torch.compile`` of the stock per-chunk ``decoder.forward``)
and ``wanops-compiled`` (:func:`torch_wanops.compile_vae`). Every output is checked
against ``diffusers-eager`` with ``torch.equal``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import math
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from diffusers import AutoencoderKLWan
from diffusers.models.autoencoders.autoencoder_kl_wan import WanDecoder3d

import torch_wanops
from torch_wanops import _backend
from torch_wanops import decoder as decoder_module
from torch_wanops.compile import is_compiled, recompile_headroom
from torch_wanops.configs import build_vae, check_decode_size, latent_shape

logger = logging.getLogger(__name__)

VARIANTS = ("diffusers-eager", "wanops-eager", "diffusers-compiled", "wanops-compiled")
COMPILED_VARIANTS = VARIANTS[2:]
# Lever rows: wanops with one lossless lever away from its default, to measure what it
# gains (or, for a lever still off, would gain). Each maps to the switch it flips:
# (module, attribute, value), where the module None means the decoder instance's attribute.
STOCK_CONV_LAYOUT_VARIANT = "wanops-eager-stock-conv-layout"
COMPUTED_SILU_VARIANT = "wanops-eager-computed-silu"
STOCK_NORM_INPUTS_VARIANT = "wanops-eager-stock-norm-inputs"
UNFUSED_RESIDUAL_VARIANT = "wanops-eager-unfused-residual-adds"
STOCK_UPSAMPLE_VARIANT = "wanops-eager-stock-upsample"
STOCK_LAYOUT_NORM_CHAIN_VARIANT = "wanops-eager-stock-layout-norm-chain"
FRAME_MAJOR_UPSAMPLER_OUTPUTS_VARIANT = "wanops-eager-frame-major-upsampler-outputs"
FP32_STOCK_CONV_LAYOUT_VARIANT = "wanops-eager-fp32-stock-conv-layout"
FP16_STOCK_CONV_LAYOUT_VARIANT = "wanops-eager-fp16-stock-conv-layout"
BIASED_CONV_OUTPUTS_VARIANT = "wanops-eager-biased-conv-outputs"
CUDNN_CONVS_VARIANT = "wanops-eager-cudnn-convs"
ATEN_WEIGHT_COPIES_VARIANT = "wanops-eager-aten-weight-copies"
TF32_ROUNDING_IN_CONV_VARIANT = "wanops-eager-tf32-rounding-in-conv"
SEPARATE_SHORTCUT_BIASES_VARIANT = "wanops-eager-separate-shortcut-biases"
UNBATCHED_LATENT_STAGE_VARIANT = "wanops-eager-unbatched-latent-stage"
STAGE_TO_FIRST_UP_BLOCK_VARIANT = "wanops-eager-stage-to-first-up-block"
SEPARATE_DUP_UP3D_ADDS_VARIANT = "wanops-eager-separate-dup-up3d-adds"
UNSPLIT_KERNEL_NORMS_VARIANT = "wanops-eager-unsplit-kernel-norms"
PER_CALL_WEIGHT_COPIES_VARIANT = "wanops-eager-per-call-weight-copies"
STOCK_LAYOUT_UNNORMED_CONVS_VARIANT = "wanops-eager-stock-layout-unnormed-convs"
AUTOGRAD_DISPATCH_VARIANT = "wanops-eager-autograd-dispatch"
FLAT_GRID_VARIANT = "wanops-eager-flat-grid"
ATEN_REDUCED_BLOCK_OUTPUTS_VARIANT = "wanops-eager-aten-reduced-block-outputs"
ATEN_REDUCED_UPSAMPLER_OUTPUTS_VARIANT = "wanops-eager-aten-reduced-upsampler-outputs"
STACKED_TIME_CONV_OUTPUTS_VARIANT = "wanops-eager-stacked-time-conv-outputs"
FIRST_COME_WEIGHT_COPIES_VARIANT = "wanops-eager-first-come-weight-copies"
FIVE_FRAME_STAGE_GROUPS_VARIANT = "wanops-eager-five-frame-stage-groups"
LEVER_SWITCHES = {
    STOCK_CONV_LAYOUT_VARIANT: (None, "channels_last_convs", False),
    COMPUTED_SILU_VARIANT: ("torch_wanops.ops.rms_norm_cat_pad_5d", "SILU_BY_TABLE", False),
    STOCK_NORM_INPUTS_VARIANT: ("torch_wanops.decoder", "FRAME_MAJOR_NORM_INPUTS", False),
    UNFUSED_RESIDUAL_VARIANT: ("torch_wanops.decoder", "FUSED_RESIDUAL_ADDS", False),
    STOCK_UPSAMPLE_VARIANT: ("torch_wanops.decoder", "FUSED_UPSAMPLE", False),
    STOCK_LAYOUT_NORM_CHAIN_VARIANT: ("torch_wanops.decoder", "FRAME_MAJOR_NORMS_STOCK_LAYOUT", False),
    FRAME_MAJOR_UPSAMPLER_OUTPUTS_VARIANT: ("torch_wanops.decoder", "CONTIGUOUS_UPSAMPLER_OUTPUTS", False),
    FP32_STOCK_CONV_LAYOUT_VARIANT: ("torch_wanops.decoder", "FP32_CHANNELS_LAST_CONVS", False),
    FP16_STOCK_CONV_LAYOUT_VARIANT: ("torch_wanops.decoder", "FP16_CHANNELS_LAST_CONVS", False),
    BIASED_CONV_OUTPUTS_VARIANT: ("torch_wanops.decoder", "RAW_CONV_OUTPUT_NORMS", False),
    CUDNN_CONVS_VARIANT: ("torch_wanops.decoder", "CHUNKED_CONVS", False),
    ATEN_WEIGHT_COPIES_VARIANT: ("torch_wanops.decoder", "CHANNELS_LAST_WEIGHT_COPIES", False),
    TF32_ROUNDING_IN_CONV_VARIANT: ("torch_wanops.decoder", "TF32_GRID_CONV_INPUTS", False),
    SEPARATE_SHORTCUT_BIASES_VARIANT: ("torch_wanops.decoder", "FUSED_SHORTCUT_BIASES", False),
    UNBATCHED_LATENT_STAGE_VARIANT: ("torch_wanops.decoder", "BATCHED_LATENT_STAGE", False),
    STAGE_TO_FIRST_UP_BLOCK_VARIANT: ("torch_wanops.decoder", "LATENT_STAGE_THROUGH_SECOND_UP_BLOCK", False),
    SEPARATE_DUP_UP3D_ADDS_VARIANT: ("torch_wanops.decoder", "FUSED_DUP_UP3D_ADDS", False),
    UNSPLIT_KERNEL_NORMS_VARIANT: ("torch_wanops.ops.rms_norm_cat_pad_5d", "BLOCK_SPLIT_NORMS", False),
    PER_CALL_WEIGHT_COPIES_VARIANT: ("torch_wanops.decoder", "DECODE_WEIGHT_COPIES", False),
    STOCK_LAYOUT_UNNORMED_CONVS_VARIANT: ("torch_wanops.decoder", "CHANNELS_LAST_UNNORMED_CONVS", False),
    AUTOGRAD_DISPATCH_VARIANT: ("torch_wanops.decoder", "DISPATCH_BELOW_AUTOGRAD", False),
    FLAT_GRID_VARIANT: ("torch_wanops._backend", "GRID_YZ_LIMIT", 0),
    ATEN_REDUCED_BLOCK_OUTPUTS_VARIANT: ("torch_wanops.decoder", "EPILOGUE_NORMS", False),
    ATEN_REDUCED_UPSAMPLER_OUTPUTS_VARIANT: ("torch_wanops.decoder", "DUP_UP3D_EPILOGUE_NORMS", False),
    STACKED_TIME_CONV_OUTPUTS_VARIANT: ("torch_wanops.decoder", "INTERLEAVED_TIME_CONV_OUTPUTS", False),
    FIRST_COME_WEIGHT_COPIES_VARIANT: ("torch_wanops.decoder", "PER_CHUNK_WEIGHT_COPIES", False),
    FIVE_FRAME_STAGE_GROUPS_VARIANT: ("torch_wanops.decoder", "LATENT_STAGE_SMALLER_FRAMES", ()),
}
LEVER_VARIANTS = tuple(LEVER_SWITCHES)
# How run_bench times the variants (a result's "timing"; results without it timed each variant's runs in turn).
TIMING = "eager variants in interleaved rounds, compiled ones in turn"
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@dataclass
class BenchConfig:
    model: str
    dtype: str
    height: int
    width: int
    frames: int
    device: str
    channels_last: bool = False
    compile: bool = False
    weights: str | None = None
    repeat: int = 3
    batch: int = 1
    levers: tuple[str, ...] = ()  # lever rows to add (names from LEVER_VARIANTS), after wanops-eager
    autocast: bool = False  # every decode under torch.autocast to the VAE's own (16-bit) dtype, as serving engines do


@dataclass
class Row:
    """One variant's numbers (JSON-ready through asdict), filled in as its timed decodes come in."""

    variant: str
    median_s: float
    speedup: float | None
    bit_exact: bool | None  # None: the reference itself
    peak_bytes: int | None
    first_call_s: float
    times_s: list[float] = field(default_factory=list)
    max_abs_diff: float | None = None
    psnr_db: float | None = None

    def record_decode(self, vae: AutoencoderKLWan, z: torch.Tensor, device: str) -> torch.Tensor:
        """One timed decode (in the variant already in force), its peak memory above what was allocated before."""
        cuda = device.startswith("cuda")
        if cuda:
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
        out, seconds = timed_decode(vae, z, device)
        self.times_s.append(seconds)
        if cuda:
            self.peak_bytes = max(self.peak_bytes or 0, torch.cuda.max_memory_allocated() - base)
        return out

    def compare(self, out: torch.Tensor, reference: torch.Tensor) -> None:
        """Fold one output's comparison with stock's into the row: exact only if every output was."""
        exact = bool(torch.equal(out, reference) and out.stride() == reference.stride())
        max_abs = (out.float() - reference.float()).abs().max().item()
        self.bit_exact = exact and self.bit_exact in (None, True)
        self.max_abs_diff = max(max_abs, self.max_abs_diff or 0.0)
        self.psnr_db = min(psnr(out, reference), math.inf if self.psnr_db is None else self.psnr_db)


def environment(device: str) -> dict[str, Any]:
    import diffusers

    name = torch.cuda.get_device_name(torch.device(device)) if device.startswith("cuda") else platform.processor() or "cpu"
    return {
        "device": name,
        "torch": torch.__version__,
        "triton": _backend.triton_version(),
        "diffusers": diffusers.__version__,
        "python": platform.python_version(),
    }


def load_vae(config: BenchConfig) -> AutoencoderKLWan:
    dtype = DTYPES[config.dtype]
    if config.weights is None:
        vae = build_vae(config.model, dtype=dtype, device=config.device)
    else:
        vae = AutoencoderKLWan.from_pretrained(config.weights, torch_dtype=dtype).eval().to(config.device)
    if config.channels_last:
        for module in vae.modules():
            if isinstance(module, (torch.nn.Conv3d, torch.nn.Conv2d)):
                fmt = torch.channels_last_3d if module.weight.dim() == 5 else torch.channels_last
                module.weight.data = module.weight.data.contiguous(memory_format=fmt)
    return vae


def add_decode_case_arguments(parser: argparse.ArgumentParser) -> None:
    """--model, --dtype, --size HxW and --frames: one decode, as the benchmark scripts take it."""
    parser.add_argument("--model", default="wan2.1")
    parser.add_argument("--dtype", default="bf16", choices=sorted(DTYPES))
    parser.add_argument("--size", default="480x832")
    parser.add_argument("--frames", type=int, default=81)


def decode_case(args: argparse.Namespace, device: str) -> tuple[AutoencoderKLWan, torch.Tensor]:
    """The VAE (random seeded weights) and seeded latents that ``args`` name, on ``device`` (meta: shapes only)."""
    height, width = (int(v) for v in args.size.split("x"))
    dtype = DTYPES[args.dtype]
    vae = build_vae(args.model, dtype=dtype, device=device)
    shape = latent_shape(args.model, height, width, args.frames)
    if device == "meta":
        return vae, torch.empty(shape, dtype=dtype, device=device)
    return vae, torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(device, dtype)


def warm_cuda_decodes(
    args: argparse.Namespace, variants: list[str]
) -> Iterator[tuple[str, Callable[[], torch.Tensor]]]:
    """For the probe scripts: per variant the decode (no autograd) of the case ``args`` name on CUDA, run twice to
    warm up, with the variant in force until the next one is asked for."""
    vae, latents = decode_case(args, "cuda")

    def decode() -> torch.Tensor:
        with torch.no_grad():
            return vae.decode(latents, return_dict=False)[0]

    for name in variants:
        with variant(vae, name):
            for _ in range(2):
                decode()
            yield name, decode


def describe_cuda_case(args: argparse.Namespace) -> str:
    """The probe scripts' first line: the case ``args`` name, the GPU and torch."""
    return (f"{args.model} {args.dtype} {args.size}x{args.frames}, {torch.cuda.get_device_name()}, "
            f"torch {torch.__version__}")


def make_latents(config: BenchConfig, vae: AutoencoderKLWan) -> torch.Tensor:
    scale = vae.spatial_compression_ratio
    check_decode_size(config.height, config.width, config.frames, scale)
    shape = (config.batch, vae.config.z_dim, (config.frames - 1) // 4 + 1, config.height // scale, config.width // scale)
    z = torch.randn(shape, generator=torch.Generator().manual_seed(0)).to(config.device, DTYPES[config.dtype])
    return z.contiguous(memory_format=torch.channels_last_3d) if config.channels_last else z


def _switch(stack: contextlib.ExitStack, module_name: str, attribute: str, value: bool) -> None:
    """Set a module-level lever switch until ``stack`` closes."""
    module = importlib.import_module(module_name)  # by name: the ops package re-exports functions over module names
    stack.callback(setattr, module, attribute, getattr(module, attribute))
    setattr(module, attribute, value)


@contextlib.contextmanager
def variant(vae: AutoencoderKLWan, name: str) -> Iterator[None]:
    """Put ``vae`` in the state of one variant for the duration of the block."""
    decoder = vae.decoder
    stack = contextlib.ExitStack()
    lever = LEVER_SWITCHES.get(name)
    if lever is not None:
        module_name, attribute, value = lever
        if module_name is None:
            setattr(decoder, attribute, value)
            stack.callback(delattr, decoder, attribute)
        else:
            _switch(stack, module_name, attribute, value)
        name = "wanops-eager"
    if name == "diffusers-eager":
        torch_wanops.restore(vae)
    elif name == "wanops-eager":
        torch_wanops.apply_to(vae)
    elif name == "diffusers-compiled":
        torch_wanops.restore(vae)
        decoder.forward = torch.compile(WanDecoder3d.forward.__get__(decoder), dynamic=False)
        stack.callback(delattr, decoder, "forward")
        # Stock forward graph-breaks (the "Rep" comparisons), so each child frame is compiled
        # per shape; give it the same recompile headroom as compile_vae so the baseline is fair.
        stack.enter_context(recompile_headroom())
    elif name == "wanops-compiled":
        if not torch_wanops.compile_vae(vae, enabled=True):
            raise RuntimeError("torch_wanops.compile_vae could not compile here")
        if not is_compiled(vae):
            logger.warning("wanops-compiled: compile_vae keeps this device and dtype on the eager lossless path "
                           "(compile.graphs_give_stock_bits); timing that")
    else:
        raise ValueError(f"unknown variant {name!r}")
    try:
        with stack:
            yield
    finally:
        torch_wanops.restore(vae)


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize(torch.device(device))


def timed_decode(vae: AutoencoderKLWan, z: torch.Tensor, device: str) -> tuple[torch.Tensor, float]:
    _sync(device)
    start = time.perf_counter()
    with torch.no_grad():
        out = vae.decode(z, return_dict=False)[0]
    _sync(device)
    return out, time.perf_counter() - start


def median_ms(fn: Callable[[], object], device: str) -> float:
    """Median time of ``fn`` in ms for the benchmark scripts: ``triton.testing.do_bench`` on CUDA, 3 timed calls elsewhere."""
    if device.startswith("cuda"):
        import triton.testing

        return triton.testing.do_bench(fn, return_mode="median")
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def psnr(a: torch.Tensor, b: torch.Tensor) -> float:
    """PSNR of ``a`` against ``b`` for outputs in [-1, 1] (peak-to-peak 2)."""
    mse = (a.double() - b.double()).square().mean().item()
    return math.inf if mse == 0 else 10 * math.log10(4.0 / mse)


def _finish(log: Callable[[str], None], row: Row) -> None:
    """A variant's median once its timed decodes are in; its numbers reported at once (a run cut short keeps
    them)."""
    row.median_s = statistics.median(row.times_s)
    peak = "-" if row.peak_bytes is None else f"{row.peak_bytes / 2**30:.2f} GiB"
    log(f"{row.variant}: median {row.median_s:.3f} s, bit-exact {row.bit_exact}, peak {peak}, "
        f"first {row.first_call_s:.1f} s")


def _empty_cuda_cache(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.empty_cache()


def run_bench(config: BenchConfig, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Decode with every variant; return the JSON-ready result (see ``wanops bench --json``).

    The eager variants are timed in interleaved rounds: each round decodes stock first, then the others, in
    alternating order from round to round, so that drift (clocks, temperature, another process on the CPU) falls
    on every variant alike; each output is checked against the same round's stock output. The compiled variants
    follow, each warmed up (compiled) once and then timed ``repeat`` times in turn, against the last stock output:
    entering a compiled variant again would compile it again.
    """
    log = progress or (lambda message: None)
    unknown = [lever for lever in config.levers if lever not in LEVER_SWITCHES]
    if unknown:
        raise ValueError(f"levers must be among {LEVER_VARIANTS}, got {unknown}")
    if config.autocast and config.dtype not in ("bf16", "fp16"):
        raise ValueError(f"autocast needs a 16-bit dtype (the VAE's own, bf16 or fp16), got {config.dtype}")
    vae = load_vae(config)
    z = make_latents(config, vae)
    with torch.autocast(torch.device(config.device).type, dtype=DTYPES[config.dtype], enabled=config.autocast):
        rows = _timed_rows(config, vae, z, log)
    result = environment(config.device)
    result.update(
        model=config.model,
        dtype=config.dtype,
        shape={"latents": list(z.shape), "height": config.height, "width": config.width, "frames": config.frames},
        weights=config.weights or "random (seeded)",
        channels_last=config.channels_last,
        autocast=config.autocast,
        repeat=config.repeat,
        timing=TIMING,
        rows=[asdict(row) for row in rows.values()],
        conv_layout_refused=[describe_geometry(geometry) for geometry in decoder_module.refused_conv_geometries()],
        conv_chunked=[describe_geometry(geometry) for geometry in decoder_module.chunked_conv_geometries()],
    )
    return result


def _timed_rows(
    config: BenchConfig, vae: AutoencoderKLWan, z: torch.Tensor, log: Callable[[str], None]
) -> dict[str, Row]:
    """run_bench's variants decoded and timed, each row's speedup filled in against diffusers-eager's."""
    eager = [*VARIANTS[:2], *(lever for lever in LEVER_VARIANTS if lever in config.levers)]
    compiled = list(COMPILED_VARIANTS) if config.compile else []
    rows: dict[str, Row] = {}
    # This case's conv-layout checks from scratch, so that its refusals below are its own.
    decoder_module.clear_conv_verdicts()
    for name in eager:
        with variant(vae, name):
            log(f"{name}: first call")
            out, first = timed_decode(vae, z, config.device)
        del out
        rows[name] = Row(name, math.nan, None, None, None, first)
    _empty_cuda_cache(config.device)
    stock, others = eager[0], eager[1:]
    for index in range(config.repeat):
        reference = None  # this round's stock output replaces the last one's, not beside it
        for name in [stock, *(others if index % 2 == 0 else others[::-1])]:
            log(f"{name}: run {index + 1}/{config.repeat}")
            with variant(vae, name):
                out = rows[name].record_decode(vae, z, config.device)
            if reference is None:
                reference = out
            else:
                rows[name].compare(out, reference)
            del out
    for name in eager:
        _finish(log, rows[name])
    for name in compiled:
        with variant(vae, name):
            log(f"{name}: first call")
            # Compilation takes two decodes. wanops: the first runs every chunk eagerly (the conv checks),
            # the second compiles both graphs, the first chunk's and the later chunks' (torch_wanops.prewarm).
            # Stock: its second decode compiled for another 42-53 s on an H200 (its first timed decode until
            # session 23), as its forward's frames meet new cache states. Each is logged as it ends, so that a
            # run cut short says how far compiling got.
            firsts = []
            for index in range(2):
                firsts.append(timed_decode(vae, z, config.device)[1])
                log(f"{name}: warm-up decode {index + 1} of 2 took {firsts[-1]:.1f} s")
            rows[name] = Row(name, math.nan, None, None, None, sum(firsts))
            _empty_cuda_cache(config.device)
            for index in range(config.repeat):
                log(f"{name}: run {index + 1}/{config.repeat}")
                out = rows[name].record_decode(vae, z, config.device)
                rows[name].compare(out, reference)
                del out
        _finish(log, rows[name])
    for row in rows.values():
        row.speedup = rows[stock].median_s / row.median_s
    return rows


def describe_geometry(geometry: decoder_module.ConvGeometry) -> str:
    """A conv geometry in a line: its input and weight shapes."""
    return f"input {geometry.input_shape} x weight {geometry.weight_shape}"


def format_table(result: dict[str, Any]) -> str:
    header = f"{'variant':<33} {'median s':>9} {'speedup':>8} {'bit-exact':>9} {'peak MiB':>9} {'first s':>8}"
    lines = [header, "-" * len(header)]
    for row in result["rows"]:
        exact = "ref" if row["bit_exact"] is None else ("yes" if row["bit_exact"] else "NO")
        peak = "-" if row["peak_bytes"] is None else f"{row['peak_bytes'] / 2**20:.0f}"
        lines.append(
            f"{row['variant']:<33} {row['median_s']:>9.3f} {row['speedup']:>7.2f}x {exact:>9} {peak:>9} "
            f"{row['first_call_s']:>8.2f}"
        )
        if row["max_abs_diff"] and not row["bit_exact"]:
            lines.append(f"{'':<33} max |diff| {row['max_abs_diff']:.3g}, PSNR {row['psnr_db']:.1f} dB")
    for geometry in result.get("conv_layout_refused", ()):
        lines.append(f"conv keeping stock's layout (refused by the conv-layout check): {geometry}")
    for geometry in result.get("conv_chunked", ()):
        lines.append(f"conv run by conv3d_chunked (checked equal to cuDNN's): {geometry}")
    return "\n".join(lines)


def plot(results: list[dict[str, Any]], path: str) -> None:
    """A bar chart of speedup over diffusers-eager, one group per result."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise RuntimeError("--plot needs matplotlib (pip install matplotlib)") from exc
    measured = {row["variant"] for result in results for row in result["rows"]}
    variants = [v for v in (*VARIANTS, *LEVER_VARIANTS) if v in measured]
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(results) + 2), 4))
    width = 0.8 / len(variants)
    for i, name in enumerate(variants):
        values = [next((r["speedup"] for r in res["rows"] if r["variant"] == name), 0) for res in results]
        positions = [j + i * width for j in range(len(results))]
        ax.bar(positions, values, width, label=name)
    labels = [f"{r['model']} {r['dtype']}\n{r['shape']['height']}x{r['shape']['width']}x{r['shape']['frames']}"
              + ("\nunder autocast" if r.get("autocast") else "") for r in results]
    ax.set_xticks([j + width * (len(variants) - 1) / 2 for j in range(len(results))], labels, fontsize=8)
    ax.axhline(1.0, color="gray", linewidth=0.8)
    ax.set_ylabel("speedup over diffusers eager")
    ax.set_title(f"Wan VAE decode on {results[0]['device']} (torch {results[0]['torch']})", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
