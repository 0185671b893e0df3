"""``wanops``: bench (the main job), check and info."""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import logging
import os
import sys
from collections.abc import Sequence

import diffusers
import torch

from torch_wanops import _backend
from torch_wanops import compile as compile_module
from torch_wanops import diffusers_code
from torch_wanops.bench import DTYPES, BenchConfig, environment, format_table, plot, run_bench
from torch_wanops.configs import CONFIGS, check_decode_size, check_device, spatial_scale
from torch_wanops.ops._inductor import ops_without_lowering

# The op modules under torch_wanops.ops, one per op (`wanops info` lists them).
OPS = ("cat_pad_5d", "dup_up3d_add", "rms_norm_cat_pad_5d", "bias_add_contiguous", "upsample_nearest_2x", "conv3d_chunked",
       "channels_last_copy")

# The switches of the levers (`wanops info` shows them): module, attribute, where it applies. All are lossless.
LEVERS = (
    ("torch_wanops.decoder", "OmniWanDecoder.channels_last_convs", "CUDA bf16/fp16/fp32, per geometry where cuDNN's kernels match"),
    ("torch_wanops.ops.rms_norm_cat_pad_5d", "SILU_BY_TABLE", "CUDA bf16/fp16"),
    ("torch_wanops.decoder", "FRAME_MAJOR_NORM_INPUTS", "CUDA, with channels_last_convs"),
    ("torch_wanops.decoder", "CHANNELS_LAST_UNNORMED_CONVS", "CUDA eager, with channels_last_convs: the time convs too"),
    ("torch_wanops.decoder", "FUSED_RESIDUAL_ADDS", "CUDA, with channels_last_convs"),
    ("torch_wanops.decoder", "FUSED_SHORTCUT_BIASES", "CUDA, with FUSED_RESIDUAL_ADDS: the 1x1x1 shortcut convs' biases"),
    ("torch_wanops.decoder", "EPILOGUE_NORMS", "CUDA eager, with FUSED_RESIDUAL_ADDS and BATCHED_LATENT_STAGE: conv2 epilogues write the next norm's channel norm"),
    ("torch_wanops.decoder", "DUP_UP3D_EPILOGUE_NORMS", "CUDA eager, with EPILOGUE_NORMS and FUSED_DUP_UP3D_ADDS: Wan2.2's upsampler epilogues write it too"),
    ("torch_wanops.decoder", "INTERLEAVED_TIME_CONV_OUTPUTS", "CUDA eager, with CHANNELS_LAST_UNNORMED_CONVS: time conv epilogues write the frame interleave"),
    ("torch_wanops.decoder", "FUSED_UPSAMPLE", "every device and dtype; Conv2d layout as channels_last_convs"),
    ("torch_wanops.decoder", "FUSED_DUP_UP3D_ADDS", "CUDA, with CONTIGUOUS_UPSAMPLER_OUTPUTS: Wan2.2's DupUp3D shortcuts in the upsampler conv's bias pass"),
    ("torch_wanops.decoder", "FRAME_MAJOR_NORMS_STOCK_LAYOUT", "where a conv keeps stock's layout (CPU, refused geometries, lever off)"),
    ("torch_wanops.decoder", "CONTIGUOUS_UPSAMPLER_OUTPUTS", "CUDA, with channels_last_convs and FUSED_UPSAMPLE"),
    ("torch_wanops.decoder", "FP32_CHANNELS_LAST_CONVS", "CUDA fp32: channels_last_convs for fp32 too"),
    ("torch_wanops.decoder", "FP16_CHANNELS_LAST_CONVS", "CUDA fp16: channels_last_convs for fp16 too"),
    ("torch_wanops.decoder", "RAW_CONV_OUTPUT_NORMS", "CUDA, with channels_last_convs: conv1's bias added by the norm"),
    ("torch_wanops.ops.rms_norm_cat_pad_5d", "BLOCK_SPLIT_NORMS", "CUDA, with RAW_CONV_OUTPUT_NORMS: 1024-channel norms in ATen's block-split order"),
    ("torch_wanops.decoder", "CHUNKED_CONVS", "CUDA bf16/fp16/TF32 fp32, with channels_last_convs: conv3d_chunked where it gives cuDNN's bits"),
    ("torch_wanops.decoder", "CHANNELS_LAST_WEIGHT_COPIES", "CUDA, with channels_last_convs: weights copied by channels_last_copy"),
    ("torch_wanops.decoder", "DECODE_WEIGHT_COPIES", "CUDA, with channels_last_convs and BATCHED_LATENT_STAGE: small weights copied once per decode"),
    ("torch_wanops.decoder", "PER_CHUNK_WEIGHT_COPIES", "with DECODE_WEIGHT_COPIES: the per-chunk stages' weights kept first, large ones too"),
    ("torch_wanops.decoder", "DISPATCH_BELOW_AUTOGRAD", "with BATCHED_LATENT_STAGE: the frame loop's ops dispatched below the autograd layer"),
    ("torch_wanops._backend", "GRID_YZ_LIMIT", "line-tiled kernels on a 3-D grid up to this many lines and width blocks (0: a flat grid)"),
    ("torch_wanops.decoder", "TF32_GRID_CONV_INPUTS", "CUDA TF32 fp32, with CHUNKED_CONVS: the fused norm writes checked chunked convs' inputs on the TF32 grid"),
    ("torch_wanops.decoder", "BATCHED_LATENT_STAGE", "CUDA, no tiling or autograd: the latent stage on 5 frames per call, checked per geometry"),
    ("torch_wanops.decoder", "LATENT_STAGE_THROUGH_SECOND_UP_BLOCK", "with BATCHED_LATENT_STAGE, where each held tensor is <= STAGE_HELD_BYTES: the stage through the second up block's residual blocks"),
)

logger = logging.getLogger("torch_wanops.cli")


def settable_name(module: str) -> str:
    """How user code reaches ``module`` to set a switch on it.

    ``torch_wanops.ops.<op>`` by attributes is the op's typed wrapper, which shadows the module of the same
    name: a switch set there would silently change nothing.
    """
    by_attributes = functools.reduce(getattr, module.split(".")[1:], importlib.import_module(module.split(".")[0]))
    return module if by_attributes is importlib.import_module(module) else f'importlib.import_module("{module}")'


# Without a GPU the default is a small embedded config that decodes in seconds on 2 cores.
# Five rounds on a CPU, whose decode times spread more than a GPU's (see README).
CPU_DEFAULTS = dict(model="wan2.1-tiny", dtype="fp32", height=128, width=128, frames=17, repeat=5)
CUDA_DEFAULTS = dict(model="wan2.1", dtype="bf16", height=480, width=832, frames=81, repeat=3)


def _default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _device_argument(value: str) -> str:
    """``--device``: cpu or cuda[:N] (whether that CUDA device exists is checked after parsing)."""
    try:
        device = check_device(value)
    except ValueError:
        device = None
    if device is None or device.type not in ("cpu", "cuda") or (device.type == "cpu" and device.index):
        raise argparse.ArgumentTypeError(f"must be cpu or cuda[:N], got {value!r}")
    return value


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a positive int, got {value!r}")
    return number


def _bench_options(args: argparse.Namespace) -> dict:
    """bench's options, each left out taking the device's default."""
    defaults = CUDA_DEFAULTS if args.device.startswith("cuda") else CPU_DEFAULTS
    return {name: default if getattr(args, name) is None else getattr(args, name) for name, default in defaults.items()}


def _bench(args: argparse.Namespace) -> int:
    options = _bench_options(args)
    config = BenchConfig(
        **options,
        device=args.device,
        channels_last=args.channels_last,
        compile=args.compile,
        weights=args.weights,
        autocast=args.autocast,
    )
    print(
        f"wanops bench: {config.model} {config.dtype} {config.height}x{config.width}, {config.frames} frames on "
        f"{config.device}{' under autocast' if config.autocast else ''}; "
        f"weights: {config.weights or 'random (seeded), no checkpoint given'}",
        flush=True,
    )
    steps = (4 if config.compile else 2) * (config.repeat + 1)
    from tqdm.auto import tqdm

    with tqdm(total=steps, desc="decoding", unit="decode", disable=None, file=sys.stderr) as bar:
        def progress(message: str) -> None:
            bar.set_postfix_str(message)
            if bar.n < steps:
                bar.update(1)

        result = run_bench(config, progress)
    print(format_table(result))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)
        print(f"wrote {args.json}")
    if args.plot:
        plot([result], args.plot)
        print(f"wrote {args.plot}")
    failed = [row["variant"] for row in result["rows"] if row["variant"] == "wanops-eager" and not row["bit_exact"]]
    if failed:
        print("ERROR: the lossless torch_wanops path did not reproduce diffusers bit for bit", file=sys.stderr)
        return 1
    return 0


def _check(args: argparse.Namespace) -> int:
    cuda = args.device.startswith("cuda")
    cases = []
    for model in ("wan2.1", "wan2.2"):
        # bf16 under autocast to bf16 too: how serving engines decode.
        for dtype, autocast in (("bf16", False), ("bf16", True), ("fp32", False)):
            # CPU: tiny models at a small size, since CPU CI runs the kernels through the Triton interpreter.
            cases.append(BenchConfig(model=model if cuda else f"{model}-tiny", dtype=dtype, device=args.device,
                                     height=240 if cuda else 32, width=416 if cuda else 48,
                                     frames=9 if cuda else 5, repeat=1, autocast=autocast))
    failures = 0
    for config in cases:
        result = run_bench(config)
        row = result["rows"][1]
        ok = bool(row["bit_exact"])
        failures += not ok
        print(f"{config.model:<12} {config.dtype:<5} {config.height}x{config.width}x{config.frames}"
              f"{' under autocast' if config.autocast else ''}  "
              f"{'bit-exact' if ok else 'MISMATCH (max |diff| %.3g)' % row['max_abs_diff']}")
    print("all bit-exact" if not failures else f"{failures} mismatching case(s)")
    return 1 if failures else 0


def _info(args: argparse.Namespace) -> int:
    env = environment(args.device)
    for key, value in env.items():
        print(f"{key:<10} {value}")
    print(f"{'cuda':<10} {torch.cuda.is_available()}")
    print(f"{'interpret':<10} {_backend.INTERPRETER}")
    for op in OPS:
        module = importlib.import_module(f"torch_wanops.ops.{op}")
        kernels, interpretable = module._kernels, getattr(module, "INTERPRETABLE", True)
        print(f"wanops::{op}: triton kernels {'importable' if kernels else 'unavailable'}")
        for dtype_name, dtype in (*DTYPES.items(), ("fp64", torch.float64)):
            name = _backend.implementation_name(args.device, dtype, kernels, interpretable)
            if dtype not in getattr(module, "KERNEL_DTYPES", _backend.KERNEL_DTYPES):  # an op taking fewer dtypes
                name = "reference"
            print(f"    {args.device} {dtype_name}: {name}")
    print("levers (lossless switches):")
    for module, path, scope in LEVERS:
        value = functools.reduce(getattr, path.split("."), importlib.import_module(module))
        print(f"    {settable_name(module)}.{path} = {value} ({scope})")
    print("compile_vae graphs (exact=True; the other pairs decode eagerly):")
    for dtype_name, dtype in DTYPES.items():
        compiled = compile_module.graphs_give_stock_bits(torch.device(args.device).type, dtype)
        print(f"    {args.device} {dtype_name}: {'compiled' if compiled else 'eager'}")
    if compile_module.EXACT_STRIDES_TAG is None:
        print(f"    (torch {torch.__version__} cannot tag the ops for their inputs' exact strides: every pair eager)")
    unlowered = ops_without_lowering()
    print("Inductor lowerings of the ops (registered at import; Inductor's implicit ones compile slowly on torch 2.11):")
    print(f"    implicit for {', '.join(map(str, unlowered))}" if unlowered else "    registered for every op")
    print("fused norms (the installed diffusers' WanRMS_norm rounds as rms_norm_cat_pad_5d does; else diffusers' own):")
    fused = importlib.import_module("torch_wanops.ops.rms_norm_cat_pad_5d").NORM_IS_INSTALLED_DIFFUSERS
    for dtype_name, dtype in (*DTYPES.items(), ("fp64", torch.float64)):
        print(f"    {dtype_name}: {'fused' if fused[dtype] else 'diffusers own'}")
    print(f"diffusers {diffusers.__version__}'s decoder code (recorded: {diffusers_code.RECORDED_VERSIONS}):")
    changed = diffusers_code.changed_functions()
    print(f"    changed, run as diffusers has them: {', '.join(changed)}" if changed else "    as recorded")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wanops", description="Bit-exact, faster Wan VAE decoding.")
    parser.add_argument("--device", type=_device_argument, default=_default_device(),
                        help="cpu or cuda[:N] (default: cuda if available)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser("bench", help="decode with stock diffusers and torch_wanops; time, memory, bit-exactness")
    bench.add_argument("--model", choices=sorted(CONFIGS), help="default: wan2.1 on CUDA, wan2.1-tiny on CPU")
    bench.add_argument("--dtype", choices=sorted(DTYPES), help="default: bf16 on CUDA, fp32 on CPU")
    bench.add_argument("--height", type=_positive_int, help="pixels (default 480 on CUDA, 128 on CPU)")
    bench.add_argument("--width", type=_positive_int, help="pixels (default 832 on CUDA, 128 on CPU)")
    bench.add_argument("--frames", type=_positive_int, help="output frames, 4k + 1 (default 81 on CUDA, 17 on CPU)")
    bench.add_argument("--channels-last", action="store_true", help="channels_last_3d weights and latents")
    bench.add_argument("--compile", action="store_true", help="also time stock and torch_wanops under torch.compile")
    bench.add_argument("--autocast", action="store_true",
                       help="decode under torch.autocast to the VAE's own dtype (bf16 or fp16), as serving engines do")
    bench.add_argument("--weights", help="a local diffusers AutoencoderKLWan folder (default: random weights)")
    bench.add_argument("--repeat", type=_positive_int,
                       help="timed rounds (one decode per variant each) after a warm-up (default 3 on CUDA, 5 on CPU)")
    bench.add_argument("--json", help="write the result as JSON to this file")
    bench.add_argument("--plot", help="write a PNG bar chart to this file (needs matplotlib)")
    bench.set_defaults(handler=_bench)

    sub.add_parser("check", help="bit-exactness of torch_wanops vs diffusers here; exit 1 on any mismatch").set_defaults(
        handler=_check
    )
    sub.add_parser("info", help="versions, device, and which implementation each op takes here").set_defaults(
        handler=_info
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available here")
    if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
        parser.error(f"--device {args.device}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    if args.command == "bench":
        _check_bench_arguments(parser, args)
    return args.handler(args)


def _check_bench_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """bench's usage errors, before anything is built: argparse's exit 2 and message, not a traceback."""
    options = _bench_options(args)
    if args.autocast and options["dtype"] not in ("bf16", "fp16"):
        parser.error("--autocast needs --dtype bf16 or fp16 (autocast to the VAE's own dtype)")
    if args.weights is not None:
        # A checkpoint's own spatial scale is read when it loads (make_latents checks the size then).
        if not os.path.isfile(os.path.join(args.weights, "config.json")):
            parser.error(f"--weights must be a local diffusers AutoencoderKLWan folder (with a config.json), "
                         f"got {args.weights!r}")
        return
    try:
        check_decode_size(options["height"], options["width"], options["frames"], spatial_scale(options["model"]))
    except ValueError as exc:
        parser.error(f"--height/--width/--frames for {options['model']}: {exc}")


if __name__ == "__main__":
    sys.exit(main())
