"""Which tensors are alive at a decode's peak, estimated without a GPU: the decode on the meta device.

    python benchmarks/memory_estimate.py --model wan2.1 --dtype bf16 --size 480x832 --frames 81

Runs one decode with meta tensors (shapes and strides only, no data, seconds on a CPU) under a
dispatch mode that counts the bytes of every storage an op creates while a tensor still refers
to it, and reports the highest total with the ops that made the storages alive then. It sees
tensors only: no cuDNN workspace, no caching-allocator rounding, so it explains the measured
peak (benchmarks/memory_decode.py on the GPU) rather than reproducing it. The conv-layout lever
is CUDA-only; --channels-last-convs forces it (and its per-geometry check, and the batched latent
stage's, to pass) to model the CUDA path, and then also reports the first decode, whose checks hold
more; --refuse makes the check refuse the convs of an input shape, as the GPU bench lists its refusals.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import weakref
from unittest import mock

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch_wanops  # noqa: E402
from torch_wanops import decoder as decoder_module  # noqa: E402
from torch_wanops.bench import add_decode_case_arguments, decode_case  # noqa: E402


class LiveStorages(TorchDispatchMode):
    """Bytes of the storages ops created that some tensor still refers to; the peak and who made it."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: dict[int, int] = collections.Counter()  # storage -> live tensors referring to it
        self.made_by: dict[int, tuple[str, int]] = {}  # storage -> (op, bytes)
        self.live = self.peak = 0
        self.at_peak: list[tuple[str, int]] = []
        self.known: set[int] = set()  # storages created before this mode (weights, inputs): not counted

    def _release(self, key: int) -> None:
        self.refs[key] -= 1
        if self.refs[key] == 0 and key in self.made_by:
            self.live -= self.made_by.pop(key)[1]
            del self.refs[key]

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {t.untyped_storage()._cdata for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)}
        for tensor in tree_flatten(out)[0]:
            if not isinstance(tensor, torch.Tensor):
                continue
            key = tensor.untyped_storage()._cdata
            if key not in inputs and key not in self.refs and key not in self.known:
                nbytes = tensor.untyped_storage().nbytes()
                self.made_by[key] = (func.overloadpacket.__name__, nbytes)
                self.live += nbytes
                if self.live > self.peak:
                    self.peak, self.at_peak = self.live, list(self.made_by.values())
            if key in self.made_by:
                self.refs[key] += 1
                weakref.finalize(tensor, self._release, key)
        return out


def conv_with_fake_kernels(refused: set[tuple[int, ...]]):
    """The check's profiled conv on the meta device, which has no kernels: one kernel for either layout,
    but another one for a channels-last input of a ``refused`` shape (as cuDNN does where the check refuses)."""

    def conv_kernels(conv, x) -> tuple[torch.Tensor, collections.Counter[str]]:
        other = tuple(x.shape) in refused and not x.is_contiguous()
        return conv(x), collections.Counter({"channels-last conv" if other else "conv": 1})

    return conv_kernels


def input_shape(text: str) -> tuple[int, ...]:
    """A --refuse argument: a conv input shape as comma-separated positive ints."""
    try:
        shape = tuple(int(n) for n in text.split(","))
    except ValueError:
        shape = ()
    if len(shape) not in (4, 5) or min(shape) < 1:
        raise argparse.ArgumentTypeError(f"expected 4 or 5 comma-separated positive ints (N,C[,T],H,W), got {text!r}")
    return shape


def fused_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, *args, **kwargs) -> torch.Tensor:
    """F.scaled_dot_product_attention as its fused kernels allocate (CUDA's memory-efficient and flash ones, the
    CPU's flash one): the output alone. The meta device takes the math path, which materialises the score matrix
    of every frame (743 MiB for 5 of Wan2.1's 480x832 latent frames), a tensor no decode on a device ever holds."""
    return query.new_empty(query.shape[:-1] + value.shape[-1:])


def estimate(vae, z: torch.Tensor) -> LiveStorages:
    tracker = LiveStorages()
    tracker.known = {t.untyped_storage()._cdata for t in (*vae.parameters(), *vae.buffers(), z)}
    with torch.no_grad(), mock.patch.object(F, "scaled_dot_product_attention", fused_attention), tracker:
        vae.decode(z, return_dict=False)
    return tracker


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_decode_case_arguments(parser)
    parser.add_argument("--channels-last-convs", action="store_true",
                        help="model the CUDA conv-layout lever (forced on, its check passing but for --refuse)")
    parser.add_argument("--refuse", action="append", default=[], type=input_shape, metavar="N,C[,T],H,W",
                        help="with --channels-last-convs: the check refuses convs of this input shape "
                             "(as the GPU bench lists them), repeatable")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    refused = set(args.refuse)
    if refused and not args.channels_last_convs:
        parser.error("--refuse models the conv-layout check: it needs --channels-last-convs")

    vae, z = decode_case(args, "meta")
    if args.channels_last_convs:
        decoder_module._channels_last_convs_supported = lambda x: True
        # The real check, its tensors as on CUDA: meta tensors have no values or kernels, so the values
        # always agree and the kernels too, but for the --refuse shapes.
        decoder_module._compares_kernels = lambda x: True
        decoder_module._conv_kernels = conv_with_fake_kernels(refused)
        decoder_module._same_bits = lambda a, b: True
        # The batched latent stage (a CUDA loop) likewise runs, its check accepting as it did for both models on
        # the H200.
        decoder_module.LATENT_STAGE_DEVICES = decoder_module.LATENT_STAGE_DEVICES | {"meta"}
        decoder_module._same_bits_and_strides = lambda a, b: a is None if b is None else a.stride() == b.stride()
    for name in ("diffusers", "wanops"):
        if name == "wanops":
            torch_wanops.apply_to(vae)
            decoder_module.clear_conv_verdicts()
            first = estimate(vae, z)  # the first decode also runs each geometry's check
            print(f"wanops first decode: peak {first.peak / 2**30:.2f} GiB of tensors")
        tracker = estimate(vae, z)
        by_op: dict[str, list[int]] = collections.defaultdict(list)
        for op, nbytes in tracker.at_peak:
            by_op[op].append(nbytes)
        print(f"{name}: peak {tracker.peak / 2**30:.2f} GiB of tensors in {len(tracker.at_peak)} storages")
        for op, sizes in sorted(by_op.items(), key=lambda kv: -sum(kv[1]))[: args.top]:
            sizes_mib = ", ".join(f"{s / 2**20:.0f}" for s in sorted(sizes, reverse=True)[:5])
            print(f"  {sum(sizes) / 2**30:6.3f} GiB {len(sizes):4d} x {op} ({sizes_mib} MiB ...)")
    refused_by_check = {geometry.input_shape for geometry in decoder_module.refused_conv_geometries()}
    for shape in sorted(refused):
        verdict = "refused" if shape in refused_by_check else "no conv has this input shape"
        print(f"--refuse {','.join(map(str, shape))}: {verdict}")


if __name__ == "__main__":
    main()
