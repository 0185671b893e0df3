"""Which implementation an op call takes: a Triton kernel or the torch reference.

Triton is optional. On CUDA tensors of a kernel dtype the Triton kernels run; with
``TRITON_INTERPRET=1`` (read once, at import, as Triton itself does) they run on
CPU tensors instead, which is how CI exercises the real kernels without a GPU.
Everything else takes the exact torch reference.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import logging
import os
from collections.abc import Iterator
from types import ModuleType

import torch

logger = logging.getLogger(__name__)

KERNEL_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
INTERPRETER = os.environ.get("TRITON_INTERPRET", "0") == "1"

_force_reference: contextvars.ContextVar[bool] = contextvars.ContextVar("wanops_force_reference", default=False)


def kernel_module(name: str) -> ModuleType | None:
    """The ``csrc_triton`` module ``name``, or None when Triton cannot be imported."""
    try:
        return importlib.import_module(f"torch_wanops.csrc_triton.{name}")
    except ImportError as exc:  # triton missing or unusable: the reference paths still work
        logger.debug("Triton kernels %s unavailable: %s", name, exc)
        return None


def triton_version() -> str | None:
    try:
        import triton
    except ImportError:
        return None
    return triton.__version__


def _kernel_device_ok(device: torch.device, interpretable: bool) -> bool:
    if device.type == "cuda":
        return not INTERPRETER
    return device.type == "cpu" and INTERPRETER and interpretable


def implementation_name(
    device: torch.device | str, dtype: torch.dtype, kernels: ModuleType | None, interpretable: bool = True
) -> str:
    """``"triton"``, ``"triton-interpreter"`` or ``"reference"``: what an op takes for this device and dtype.

    ``interpretable=False`` marks an op whose kernel is exact on the GPU but not under
    the interpreter (its exp is numpy's, neither CUDA's nor ATen's CPU one): on CPU
    such an op keeps its exact reference, and tests drive its kernel directly.
    """
    if (
        kernels is not None
        and not _force_reference.get()
        and dtype in KERNEL_DTYPES
        and _kernel_device_ok(torch.device(device), interpretable)
    ):
        return "triton-interpreter" if INTERPRETER else "triton"
    return "reference"


def uses_kernel(tensor: torch.Tensor, kernels: ModuleType | None, interpretable: bool = True) -> bool:
    """Whether an op on ``tensor`` runs its Triton kernel (else the torch reference)."""
    return implementation_name(tensor.device, tensor.dtype, kernels, interpretable) != "reference"


@contextlib.contextmanager
def reference_kernels() -> Iterator[None]:
    """Run every wanops op through its torch reference inside this block (this thread/context only)."""
    token = _force_reference.set(True)
    try:
        yield
    finally:
        _force_reference.reset(token)


def device_of(tensor: torch.Tensor) -> contextlib.AbstractContextManager:
    """Make ``tensor``'s CUDA device current, so a launch lands on it and on its current stream.

    A no-op where it is current already (every call of a one-GPU decode): the device guard's
    enter and exit are CPU time on each launch.
    """
    if tensor.device.type == "cuda" and tensor.device.index != torch.cuda.current_device():
        return torch.cuda.device(tensor.device)
    return contextlib.nullcontext()


def index_needs_int64(*tensors: torch.Tensor) -> bool:
    """True when an element offset in any of ``tensors`` may not fit in int32."""
    limit = 2**31 - 1
    for tensor in tensors:
        if tensor.numel() >= limit:
            return True
        # Every offset from a tensor's first element stays inside its storage: a storage under the
        # limit settles it without walking the strides (a per-launch cost on the CPU).
        if tensor.untyped_storage().nbytes() < limit * tensor.element_size():
            continue
        span = sum((size - 1) * abs(stride) for size, stride in zip(tensor.shape, tensor.stride()) if size > 0)
        if span >= limit:
            return True
    return False


def launch_tile(inner_size: int) -> tuple[int, int, int]:
    """(ROWS, BLOCK, num_warps) for a kernel walking rows of ``inner_size`` contiguous elements.

    BLOCK covers the innermost dimension (a power of two, at most 1024); ROWS fills
    the tile to a fixed element count. The interpreter runs one Python step per
    program, so it gets far larger tiles.
    """
    block = min(1024, max(16, 1 << max(0, inner_size - 1).bit_length()))
    # 1024 elements and 4 warps measured best across the decoder's shapes on an H200
    # (benchmarks/sweep_tiles.py): up to 3.6x faster than 4096/8 on NCDHW rows of ~200.
    tile = 1 << 16 if INTERPRETER else 1024
    return max(1, tile // block), block, 4


def next_power_of_2(value: int) -> int:
    return 1 << max(0, value - 1).bit_length()


def lines_per_program(tile_elements: int, lines: int) -> int:
    """Lines of a line-tiled kernel per program: one on the GPU; under the interpreter,
    whose cost is per program, as many as fill about 2**17 elements (a power of two), but
    no more than the launch's ``lines`` round up to (a program's arrays are all that wide)."""
    if not INTERPRETER:
        return 1
    return min(1 << max(0, ((1 << 17) // tile_elements).bit_length() - 1), next_power_of_2(lines))


def line_tile(
    channels: int, width: int, channels_fastest: bool, arithmetic: bool = False, transposing: bool = False
) -> tuple[int, int, int]:
    """(BLOCK_C, BLOCK_W, num_warps) for a kernel tiling (channels x width) of one (batch, frame, row) line.

    The output's stride-1 axis (channels for channels_last_3d, else width) gets up to
    a fixed block; the other axis fills the tile. Measured on an H200
    (benchmarks/sweep_tiles.py): plain copies run best with long stride-1 blocks,
    the arithmetic-bound norm prologue with short ones. A ``transposing`` copy (x
    read width-fastest, the output written channels-fastest: upsample_nearest_2x into
    a channels-last conv input) needs both axes long enough to coalesce: 64 x 64 ran
    its decoder shapes 3.8-9x faster than the plain copy's 256-512 x 2-4
    (``sweep_tiles.py --upsample``). The norm prologue into a channels-last output has
    its own tiles (``norm_tile``). The interpreter runs one Python step per program,
    so it gets whole lines.
    """
    if INTERPRETER:
        tile, fastest_limit = 1 << 16, 1 << 16
    elif arithmetic and channels_fastest:
        return norm_tile(channels, width, transposing)
    elif arithmetic:
        tile, fastest_limit = 2048, 128
    elif transposing:
        tile, fastest_limit = 4096, 64
    else:
        tile, fastest_limit = (1024, 512) if channels_fastest else (2048, 512)
    fastest, other = (channels, width) if channels_fastest else (width, channels)
    fastest_block = min(next_power_of_2(fastest), fastest_limit)
    other_block = min(next_power_of_2(other), max(1, tile // fastest_block))
    block_c, block_w = (fastest_block, other_block) if channels_fastest else (other_block, fastest_block)
    return block_c, block_w, 4


def norm_tile(channels: int, width: int, transposing: bool) -> tuple[int, int, int]:
    """(BLOCK_C, BLOCK_W, num_warps) for the norm prologue writing a channels-last conv input (GPU).

    A channel block that divides the channels (32 for 96, 64 for 192 to 512) leaves no lane idle:
    64 at 96 channels masked a quarter of them. Two sweeps on an H200 over Wan2.1's norms
    (``benchmarks/decompose_norm_kernel.py``, gpu-logs/session14) agree on the rest: 1024 elements
    on 2 warps for an NCDHW x (``transposing``), and for a channels-last x 32 x 16 on 2 warps or
    64 x 32 on 4; the 96-channel norms ran 0.82 -> 0.58 ms (NCDHW x) and 0.71 -> 0.44 ms against
    the 64 x 16 tile on 4 warps used before.
    """
    block_c = 64
    while block_c > 8 and channels % block_c:
        block_c //= 2
    if channels % block_c:
        block_c = min(64, next_power_of_2(channels))
    if transposing or block_c not in (32, 64):
        block_w, warps = 1024 // block_c, 2
    else:
        block_w, warps = block_c // 2, block_c // 16
    return block_c, min(block_w, next_power_of_2(width)), warps


def transpose_tile(channels: int, width: int, dup_residual: bool = False) -> tuple[int, int, int]:
    """(BLOCK_C, BLOCK_W, num_warps) for bias_add_contiguous's (channels x width) tile of one line.

    It reads channel-fastest (a channels-last conv output) and writes width-fastest, so
    both axes need long blocks: 128 x 128 with 8 warps was the best over the decoder's
    shapes on an H200 (``sweep_tiles.py --bias-add``: 1.25-1.9x faster than 32 x 32,
    within 5% of the best tile of each shape; 4 warps spill at 384 channels). Adding a
    ``dup_residual`` (a DupUp3D source read through its index map), 32 x 128 on 4 warps was the
    best at both of Wan2.2's shapes and 1.7-1.8x faster than 128 x 128 (``--dup-residual``,
    gpu-logs/session34/D). The interpreter runs one Python step per program, so it gets far
    larger tiles.
    """
    if INTERPRETER:  # one Python step per program: as much of the line as 2**16 elements hold
        block_w = min(1 << 16, next_power_of_2(width))
        block_c = min(next_power_of_2(channels), max(1, (1 << 16) // block_w))
        return block_c, block_w, 8
    block_w = min(128, next_power_of_2(width))
    if dup_residual:
        return min(32, next_power_of_2(channels)), block_w, 4
    return min(128, next_power_of_2(channels)), block_w, 8


def norm_epilogue_tile(channels: int, width: int, dup_residual: bool = False) -> tuple[int, int, int]:
    """(BLOCK_W, GROUPS, num_warps) for bias_add_norm_kernel: BLOCK_W columns of a line per program, GROUPS x 16
    channels per step. On an H200 (gpu-logs/session42/B, bf16) 32 columns x 64 channels on 4 warps ran best at
    256-512 channels, 0.18 ms against 0.22 ms for bias_add_contiguous and ATen's norm of its output (256 channels,
    4x240x416); where 64 does not divide the channels, 64 columns x 32 channels (96 channels at 480x832: 0.25 ms
    against 0.33). With a DupUp3D residual 64 columns on 4 warps ran best (gpu-logs/session43/D: 512 channels at
    2x240x416, 0.159 ms against 0.173 on 8 warps, 0.189 on the plain tile and 0.221 for bias_add_contiguous and
    ATen's norm). The interpreter takes whole lines (its cost is per program), in the same channel steps."""
    groups = 4 if channels % 64 == 0 else 2 if channels % 32 == 0 else 1
    if INTERPRETER:
        return min(1024, next_power_of_2(width)), groups, 4
    return (64 if dup_residual or groups != 4 else 32), groups, 4


def channel_norm_tile(ctas: int) -> tuple[int, int]:
    """(BLOCK columns, num_warps) for channel_norm_kernel, whose order per column is the same on any tile.

    128 columns on 4 warps ran every unsplit decoder norm (under 1024 channels) about as fast as ATen or
    faster; where ATen splits each column's channels over ``ctas`` blocks (1024 channels), 32 on 8 warps
    was the best tile (1024 channels, 2 frames at 60x104: 0.031 ms against 0.044 ms, gpu-logs/session34/F).
    """
    return (32, 8) if ctas > 1 else (128, 4)


def channels_last_copy_tile(channels: int, positions: int, element_size: int) -> tuple[int, int, int]:
    """(BLOCK_C, BLOCK_S, num_warps) for channels_last_copy's (channels x spatial positions) tile.

    Both axes must be long enough to coalesce (x is read position-fastest, the output
    written channel-fastest): 8 KiB per program, at most 256 channels, on 4 warps was within
    a few percent of the best tile for every Wan conv weight on an H200 (session 16 sweep:
    (1024, 1024, 3, 3, 3) bf16 in 37 us, 3.0 TB/s, where ATen's copy takes 100 us). The
    interpreter runs one Python step per program, so it gets far larger tiles.
    """
    if INTERPRETER:
        tile, positions_limit, channels_limit = 1 << 16, 1 << 16, 1 << 16
    else:
        tile, positions_limit, channels_limit = 8192 // element_size, 64, 256
    block_s = min(positions_limit, next_power_of_2(positions))
    block_c = min(next_power_of_2(channels), channels_limit, max(1, tile // block_s))
    return block_c, block_s, 4


def cudnn_convs_may_use_tf32() -> bool:
    """Whether cuDNN may run fp32 convolutions in TF32 now: what ATen's convs read (never with cuDNN off)."""
    return torch.backends.cudnn.enabled and fp32_convs_in_tf32()


@torch.compiler.assume_constant_result
def fp32_convs_in_tf32() -> bool:
    """Whether cuDNN's fp32 convolutions may use TF32, cuDNN enabled or not.

    From the fp32_precision settings where this torch has them (a "none" inherits from the
    setting above it; the legacy ``torch.backends.cudnn.allow_tf32`` maps onto them, and reading
    it raises once convs and RNNs are set apart), else from ``allow_tf32``. Dynamo cannot trace
    the settings' getter: a graph takes the value it had when traced, without a guard
    (torch_wanops.compile watches it instead).
    """
    precision_of = getattr(torch._C, "_get_fp32_precision_getter", None)
    if precision_of is None:
        return torch.backends.cudnn.allow_tf32
    for backend, op in (("cuda", "conv"), ("cuda", "all"), ("generic", "all")):
        precision = precision_of(backend, op)
        if precision != "none":
            return precision == "tf32"
    return False


def conv_tile(out_channels: int, dtype: torch.dtype, rounds_x: bool = False) -> tuple[int, int, int, int, int]:
    """(BLOCK_M, BLOCK_N1, BLOCK_N2, num_warps, num_stages) for conv3d_chunked's implicit GEMM.

    The output channels of a program are BLOCK_N1 + BLOCK_N2, each a power of two of at
    least 16 (tl.dot's minimum): 96 as 64 + 32 leaves no lane idle. On an H200 (session 15
    sweep, 96 -> 96 channels, 6x482x834 bf16/fp16) 256 positions on 8 warps with 3 stages ran
    best: 1.68 ms against 1.92 ms for one 128-wide block, 2.69 ms for cuDNN's own kernel.
    fp32 ran best on 128 positions: with 4 stages where the kernel rounds each x operand to
    TF32 in registers (``rounds_x``; session 17: 4.56 ms against 4.94 ms on 256, cuDNN 5.64 ms),
    with 3 where x goes to the tensor cores as loaded (session 17's pre-rounded probe: 3.29 ms).
    Above 128 output channels such an x runs best on 256 positions x (128 + 64) channels (session
    19: 192 -> 192 at 6x242x418 2.59 against 3.76 ms on 128 x (64 + 64), 384 -> 384 at 4x122x210
    1.31 against 1.54 ms).
    The interpreter gets the same tile (its cost is per program, so larger is no worse).
    """
    if dtype == torch.float32 and not rounds_x and out_channels > 128:
        return 256, 128, 64, 8, 3
    positions, stages = (128, 4 if rounds_x else 3) if dtype == torch.float32 else (256, 3)
    if out_channels <= 64:
        return positions, max(16, next_power_of_2(out_channels)), 0, 8, stages
    return positions, 64, max(16, next_power_of_2(min(out_channels, 128) - 64)), 8, stages


@functools.lru_cache(maxsize=256)
def division_magic(divisor: int) -> tuple[int, int]:
    """(magic, shift) with which ``csrc_triton.indexing.divide`` computes ``n // divisor`` for every
    0 <= n < 2**31: the multiplier m = ceil(2**(31 + shift) / divisor), shift = ceil(log2(divisor)), so
    that floor(n * m / 2**(31 + shift)) is the quotient (Granlund and Montgomery 1994, theorem 4.2: m * divisor
    exceeds 2**(31 + shift) by less than 2**shift). m lies in [2**31, 2**32); it is passed less 2**31, which
    keeps the argument an int32 whatever the divisor (one kernel variant)."""
    if not 1 <= divisor < 2**31:
        raise ValueError(f"divisor must be in [1, 2**31), got {divisor}")
    shift = (divisor - 1).bit_length()
    multiplier = -(-(1 << (31 + shift)) // divisor)
    return multiplier - 2**31, shift


# CUDA caps a launch grid's x dimension at 2**31 - 1 blocks.
GRID_X_LIMIT = 2**31 - 1
GRID_YZ_LIMIT = 65535


def line_tile_grid(line_groups: int, c_blocks: int, w_blocks: int) -> tuple[int, ...]:
    """The launch grid of a line-tiled kernel, in ``csrc_triton.indexing.line_tile_program``'s order:
    (c_blocks, w_blocks, line_groups) where CUDA's y and z take them, else one flat axis."""
    programs = line_groups * c_blocks * w_blocks
    if programs > GRID_X_LIMIT:
        raise ValueError(f"x is too large for one launch: {programs} programs, CUDA allows {GRID_X_LIMIT}")
    if w_blocks <= GRID_YZ_LIMIT and line_groups <= GRID_YZ_LIMIT:
        return (c_blocks, w_blocks, line_groups)
    return (programs,)
