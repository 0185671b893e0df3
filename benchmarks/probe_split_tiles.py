"""Where and how cuDNN's ``segment_k_on`` TF32 convs add in another order than conv3d_chunked (CUDA probe).

    python benchmarks/probe_split_tiles.py [--tile-limit 8]

Session 17 found cuDNN's 128x128x32 TF32 kernel for Wan2.1's 192 -> 192 convs (its
``segment_k_on`` variant) differing from the chunk order in 5.8e-3 of the outputs. That is
about the share of the output tiles left over after whole waves over the GPU's SMs (6240 tiles of
128 positions x 128 channels, 132 SMs: 36), which a stream-K schedule splits along K over several
programs and then adds up. Per geometry this probe prints which cuDNN tiles differ from the chunk
order, then tests on each such tile how its K steps (32 channels x 1 tap each, chunk-major) are
split and the partial sums added:

- the same number of segments S in every such tile (2 to 40), the K steps dealt out evenly
  (the longer segments first, last, or where ``i * K // S`` puts them), with the count that
  session 19 found (R = tiles mod SMs, S = SMs // R) marked; the partial sums added in K order,
  reversed, the first or last plus the rest, or pairwise as a tree;
- any split into two or three segments;
- segment lengths L or L + 1 (L at least ``--min-length``) at any phase.

Partial sums come from conv3d_chunked's own K steps (``csrc_triton.conv3d_chunked``'s helpers) over a
K-step range, so each segment's sum is what a program summing only that range gets. The inputs are on
the TF32 grid (as ``TF32_GRID_CONV_INPUTS`` gives the decoder), so only the order matters.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import sys
import time

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from csrc_triton.conv3d_chunked import dot_step, output_positions, x_operand  # noqa: E402
from torch_wanops import _backend  # noqa: E402
from torch_wanops.decoder import _conv_kernels  # noqa: E402
from torch_wanops.ops import conv3d_chunked  # noqa: E402
from torch_wanops.ops._common import rounded_to_tf32  # noqa: E402

TILE_M = TILE_N = 128
CHUNK = 32
# (input shape, output channels, dtype): Wan2.1 fp32's segment_k_on convs (480x832 and 720x1280
# decodes, later and first chunks), and the 192-channel conv in bf16.
GEOMETRIES = [
    ((1, 192, 6, 242, 418), 192, torch.float32),
    ((1, 384, 3, 62, 106), 384, torch.float32),
    ((1, 192, 6, 362, 642), 192, torch.float32),
    ((1, 192, 3, 242, 418), 192, torch.float32),
    ((1, 192, 3, 362, 642), 192, torch.float32),
    ((1, 192, 6, 242, 418), 192, torch.bfloat16),
    ((1, 384, 4, 182, 322), 384, torch.float32),
]


@triton.jit
def partial_sums_kernel(
    x_ptr, w_ptr, table_ptr, m_start, n_start, positions, out_channels, out_frames, out_height, out_width,
    x_sb, x_sc, x_st, x_sh, x_sw, w_sn, w_sc, w_st, w_sh, w_sw,
    IN_CHANNELS: tl.constexpr, KT: tl.constexpr, KH: tl.constexpr, KW: tl.constexpr, CHUNK: tl.constexpr,
    STEPS: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    """Program s: the tile's sum over K steps s .. e - 1, stored as table[s, e] for every e > s (the op's steps)."""
    start = tl.program_id(0)
    rows = tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    m, m_ok, x_base = output_positions(m_start, positions, out_frames, out_height, out_width, x_sb, x_st, x_sh, x_sw,
                                       False, BLOCK_M)
    n = n_start + cols
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(start, STEPS):
        a, chunk, dt, dh, dw = x_operand(x_ptr, x_base, m_ok, step, x_sc, x_st, x_sh, x_sw, KT, KH, KW, CHUNK,
                                         False, False)
        acc = dot_step(acc, a, w_ptr, chunk, dt, dh, dw, n, out_channels, w_sn, w_sc, w_st, w_sh, w_sw, CHUNK, False)
        offset = ((start * (STEPS + 1) + step + 1) * BLOCK_M + rows[:, None]) * BLOCK_N + cols[None, :]
        tl.store(table_ptr + offset, acc)


def partial_table(x: torch.Tensor, w: torch.Tensor, out_shape: tuple, m_tile: int, n_tile: int) -> torch.Tensor:
    steps = (x.shape[1] // CHUNK) * 27
    table = torch.zeros((steps, steps + 1, TILE_M, TILE_N), device=x.device)
    positions = out_shape[0] * out_shape[2] * out_shape[3] * out_shape[4]
    partial_sums_kernel[(steps,)](
        x, w, table, m_tile * TILE_M, n_tile * TILE_N, positions, *out_shape[1:], *x.stride(), *w.stride(),
        IN_CHANNELS=x.shape[1], KT=3, KH=3, KW=3, CHUNK=CHUNK, STEPS=steps, BLOCK_M=TILE_M, BLOCK_N=TILE_N,
        num_warps=8, num_stages=2,
    )
    return table


ORDERS = {
    "in K order": lambda parts: _fold(parts),
    "reversed": lambda parts: _fold(parts[::-1]),
    "first + rest in K order": lambda parts: parts[0] + _fold(parts[1:]),
    "first + rest reversed": lambda parts: parts[0] + _fold(parts[:0:-1]),
    "last + rest reversed": lambda parts: parts[-1] + _fold(parts[-2::-1]),
    "pairwise": lambda parts: _pairwise(parts),
}


def _fold(parts: list) -> torch.Tensor:
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _pairwise(parts: list) -> torch.Tensor:
    """Neighbours added in pairs, level by level (an odd one out carried up as it is): a tree reduction."""
    while len(parts) > 1:
        parts = [parts[i] + parts[i + 1] if i + 1 < len(parts) else parts[i] for i in range(0, len(parts), 2)]
    return parts[0]


def matching(table: torch.Tensor, ref: torch.Tensor, valid: int, splits: list[tuple[int, ...]]) -> list[tuple]:
    """The (boundaries, order) among ``splits`` (inner boundaries, any count) that give ref's tile."""
    steps = table.shape[0]
    found = []
    by_count: dict[int, list[tuple[int, ...]]] = {}
    for split in splits:
        by_count.setdefault(len(split), []).append(split)
    for count, group in by_count.items():
        for start in range(0, len(group), 1024):
            bounds = torch.tensor([(0, *s, steps) for s in group[start:start + 1024]], device=table.device)
            parts = [table[bounds[:, i], bounds[:, i + 1]][..., :valid] for i in range(count + 1)]
            orders = ORDERS if count > 1 else {"in K order": ORDERS["in K order"]}
            for order, combine in orders.items():
                hit = (combine(parts).to(ref.dtype) == ref[..., :valid]).flatten(1).all(1).nonzero().flatten().tolist()
                found += [(group[start + i], order) for i in hit]
    return found


def regular_splits(steps: int, min_length: int) -> list[tuple[int, ...]]:
    """Boundaries at a phase p, then gaps of L or L + 1 (every sequence), L >= min_length."""
    splits = set()
    for length in range(min_length, steps):
        gaps = max(0, (steps - 1) // length)
        for phase in range(1, length + 2):
            for pattern in itertools.product((length, length + 1), repeat=gaps):
                bounds, at = [], phase
                for gap in (0, *pattern):
                    at += gap
                    if at >= steps:
                        break
                    bounds.append(at)
                if bounds and (at >= steps or len(bounds) == gaps + 1):
                    splits.add(tuple(bounds))
    return sorted(splits)


EVEN_SPLITS = {
    "longer first": lambda i, steps, count: i * (steps // count) + min(i, steps % count),
    "longer last": lambda i, steps, count: i * (steps // count) + max(0, i - (count - steps % count)),
    "i * K // S": lambda i, steps, count: i * steps // count,
    "runs of ceil(K / S)": lambda i, steps, count: min(steps, i * -(-steps // count)),
}


def even_split(steps: int, count: int, rule: str) -> tuple[int, ...]:
    """The inner boundaries of ``count`` segments of ``steps`` K steps, as even as ``rule`` deals them."""
    return tuple(EVEN_SPLITS[rule](i, steps, count) for i in range(1, count))


def on_grid(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """fp32 on the TF32 grid (what the tensor cores multiply), 16-bit dtypes as they are."""
    return rounded_to_tf32(values) if dtype == torch.float32 else values.to(dtype)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tile-limit", type=int, default=8, help="tiles searched exhaustively per geometry")
    parser.add_argument("--geometries", type=int, nargs="+", default=list(range(len(GEOMETRIES))))
    parser.add_argument("--min-length", type=int, default=24,
                        help="shortest segment of the regular splits searched per tile (11 segments of 162 steps: 14)")
    args = parser.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(torch.__version__, _backend.triton_version(), torch.backends.cudnn.version(), torch.cuda.get_device_name(),
          f"{sms} SMs", flush=True)
    for index in args.geometries:
        shape, out_channels, dtype = GEOMETRIES[index]
        generator = torch.Generator(device="cuda").manual_seed(index)
        x = on_grid(torch.randn(shape, device="cuda", generator=generator), dtype).contiguous(
            memory_format=torch.channels_last_3d)
        weight = on_grid(torch.randn((out_channels, shape[1], 3, 3, 3), device="cuda", generator=generator) * 0.05, dtype)
        with torch.no_grad():
            ref, kernels = _conv_kernels(functools.partial(F.conv3d, weight=weight), x)
            again = F.conv3d(x, weight)
            ours = conv3d_chunked(x, weight, truncate_x=True)
        out_shape = tuple(ref.shape)
        positions = ref.numel() // out_channels
        flat_ref = ref.permute(0, 2, 3, 4, 1).reshape(positions, out_channels)
        differs = (ours.permute(0, 2, 3, 4, 1).reshape(positions, out_channels) != flat_ref)
        m_tiles, n_tiles = -(-positions // TILE_M), -(-out_channels // TILE_N)
        padded = torch.zeros((m_tiles * TILE_M, n_tiles * TILE_N), dtype=torch.int64, device="cuda")
        padded[:positions, :out_channels] = differs
        per_tile = padded.view(m_tiles, TILE_M, n_tiles, TILE_N).sum((1, 3))
        tiles = per_tile.nonzero().tolist()
        print(f"\n{shape} -> {out_channels} {dtype}: cuDNN deterministic={torch.equal(ref, again)}, kernels {sorted(kernels)}",
              flush=True)
        print(f"  {differs.float().mean().item():.3e} of outputs differ; {m_tiles} x {n_tiles} = {m_tiles * n_tiles} tiles,"
              f" {len(tiles)} differ (tiles mod SMs = {m_tiles * n_tiles % sms})", flush=True)
        print("  differing tiles (m, n, count):", [(m, n, per_tile[m, n].item()) for m, n in tiles][:80], flush=True)
        if not tiles:
            continue
        steps = (shape[1] // CHUNK) * 27
        hypotheses = {(count, rule): even_split(steps, count, rule)
                      for count, rule in itertools.product(range(2, 41), EVEN_SPLITS)}
        # Runs of ceil(K / S) can leave the last ones empty: those splits are not S runs.
        hypotheses = {key: split for key, split in hypotheses.items() if split[-1] < steps and len(set(split)) == len(split)}
        remainder = m_tiles * n_tiles % sms
        print(f"  session 19's rule: {remainder} tiles split in {sms // remainder if remainder else '-'} segments",
              flush=True)
        score = {key: {order: 0 for order in ORDERS} for key in hypotheses}
        searched = 0
        started = time.perf_counter()
        for m, n in tiles:
            table = partial_table(x, weight, out_shape, m, n)
            ref_tile = torch.zeros((TILE_M, TILE_N), device="cuda", dtype=dtype)
            rows = flat_ref[m * TILE_M:(m + 1) * TILE_M, n * TILE_N:(n + 1) * TILE_N]
            ref_tile[:rows.shape[0], :rows.shape[1]] = rows
            valid = rows.shape[1]
            for key, split in hypotheses.items():
                for _, order in matching(table, ref_tile, valid, [split]):
                    score[key][order] += 1
            if searched < args.tile_limit:
                searched += 1
                t0 = time.perf_counter()
                two = matching(table, ref_tile, valid, [(b,) for b in range(1, steps)])
                three = matching(table, ref_tile, valid, list(itertools.combinations(range(1, steps), 2)))
                regular = matching(table, ref_tile, valid, regular_splits(steps, args.min_length))
                print(f"  tile {(m, n)}: chunk order whole={torch.equal(table[0, steps][:, :valid], ref_tile[:, :valid])}; "
                      f"2 segments {two[:6]}; 3 segments {three[:6]}; regular {regular[:10]} "
                      f"({time.perf_counter() - t0:.1f} s)", flush=True)
            del table
        best = sorted(((hits, key, order) for key, by_order in score.items() for order, hits in by_order.items()),
                      reverse=True)[:8]
        print(f"  even splits, tiles matched of {len(tiles)} (best 8; {time.perf_counter() - started:.1f} s):",
              flush=True)
        for hits, key, order in best:
            print(f"    {hits}: {key[0]} segments, {key[1]}, summed {order}", flush=True)
        del x, weight, ref, again, ours
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
