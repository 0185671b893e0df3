"""Where fp32 decodes through the conv-layout lever would leave stock's bits, and why (CUDA).

    python benchmarks/diag_fp32_channels_last.py             # switch by switch, tiny and real configs
    python benchmarks/diag_fp32_channels_last.py --per-call  # each lever conv of a tiny and a real decode, on its own data

The first mode decodes with the fp32 lever on and, one at a time, each other lever off, every
geometry's check forced to fail, or TF32 off, and prints whether the decode equals stock's and
which geometries kept the lever. The second compares, whatever each geometry's check decided,
for every channels-last conv call of a tiny Wan2.1 decode (and, one line per geometry, of a
480x832x17 one), the lever's conv with the stock-layout conv on that call's own input, so a
geometry whose calls disagree on some inputs only shows that agreement depends on the values.
Once per geometry it also lists the CUDA kernels each layout runs, with launch counts, as the
decoder's check sees them (``decoder._conv_kernels``: layout passes apart). Session 10 on the
H200 (then with a lister of its own that set elementwise passes apart, not cuDNN's transforms
and padding): every geometry whose calls disagreed ran different conv kernels in the two
layouts, every exact one the same; the decoder's check now rests on that.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

import torch
import torch.nn as nn

import torch_wanops
from torch_wanops import decoder as decoder_module
from torch_wanops.configs import build_vae, latent_channels, latent_shape

REAL_SIZES = ((64, 64), (128, 96), (240, 416))


@contextlib.contextmanager
def switches(**values: object) -> Iterator[None]:
    saved = {name: getattr(decoder_module, name) for name in values}
    for name, value in values.items():
        setattr(decoder_module, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(decoder_module, name, value)


def latents(arch: str, device: str, height: int | None = None, width: int | None = None) -> torch.Tensor:
    generator = torch.Generator().manual_seed(1)
    if height is None:  # the tiny configs: 3 latent frames of 4x6, batch 2
        shape = (2, latent_channels(arch), 3, 4, 6)
    else:
        shape = latent_shape(arch, height, width, 17)
    return torch.randn(shape, generator=generator).to(device)


def compare(arch: str, z: torch.Tensor, label: str, tf32: bool = True, **values: object) -> None:
    torch.backends.cudnn.allow_tf32 = tf32
    decoder_module.clear_conv_verdicts()
    stock = build_vae(arch, seed=0, dtype=torch.float32, device=z.device)
    omni = build_vae(arch, seed=0, dtype=torch.float32, device=z.device, vae_class=torch_wanops.OmniAutoencoderKLWan)
    with switches(FP32_CHANNELS_LAST_CONVS=True, **values), torch.no_grad():
        expected = stock.decode(z, return_dict=False)[0]
        got = omni.decode(z, return_dict=False)[0]
    verdicts = decoder_module._channels_last_conv_verdicts
    failing = [key[:2] for key, ok in verdicts.items() if not ok]
    print(f"{arch:12} {label:36} exact {torch.equal(got, expected)!s:5} max |diff| "
          f"{(got - expected).abs().max().item():.3g} lever kept {sum(verdicts.values())}/{len(verdicts)} "
          f"failing {failing[:4]}", flush=True)
    torch.backends.cudnn.allow_tf32 = True


def switch_by_switch(device: str) -> None:
    for arch in ("wan2.1-tiny", "wan2.2-tiny"):
        z = latents(arch, device)
        compare(arch, z, "lever")
        compare(arch, z, "every check fails", _same_bits=lambda a, b: False)
        for name in ("FUSED_RESIDUAL_ADDS", "FRAME_MAJOR_NORM_INPUTS", "FUSED_UPSAMPLE", "CONTIGUOUS_UPSAMPLER_OUTPUTS"):
            compare(arch, z, f"{name}=False", **{name: False})
        compare(arch, z, "TF32 off", tf32=False)
    for arch in ("wan2.1", "wan2.2"):
        for height, width in REAL_SIZES:
            compare(arch, latents(arch, device, height, width), f"lever {height}x{width}")


def per_call(device: str) -> None:
    lever_conv = decoder_module._channels_last_conv
    kernels_listed = set()
    disagreeing_calls: dict[tuple, list[int]] = {}  # geometry -> [calls, calls where lever != stock]
    verbose = True

    def checked(conv, conv_input, residual=None, frames=None):
        padded = conv_input()
        own = padded.clone()
        out = lever_conv(conv, lambda: padded, residual, frames)
        if own.dim() == 5:
            bias = conv.bias.view(1, -1, 1, 1, 1)
            stock = nn.Conv3d.forward(conv, own.contiguous())
            lever = conv._conv_forward(own, conv.weight, None) + bias
            repeat = conv._conv_forward(own, conv.weight, None) + bias
            verdict = [ok for key, ok in decoder_module._channels_last_conv_verdicts.items()
                       if key[0] == tuple(own.shape) and key[1] == tuple(conv.weight.shape)]
            geometry = (tuple(own.shape), tuple(conv.weight.shape))
            counts = disagreeing_calls.setdefault(geometry, [0, 0])
            counts[0] += 1
            counts[1] += not torch.equal(lever, stock)
            if verbose:
                zero_frames = int((own.abs().amax(dim=(0, 1, 3, 4)) == 0).sum())
                print(f"{geometry[0]} x {geometry[1]}: check {verdict} zero frames {zero_frames}/{own.shape[2]} "
                      f"lever == stock {torch.equal(lever, stock)!s:5} lever deterministic "
                      f"{torch.equal(lever, repeat)}", flush=True)
            if own.is_cuda and geometry not in kernels_listed:
                kernels_listed.add(geometry)
                conv_without_bias = lambda x: conv._conv_forward(x, conv.weight, None)  # noqa: E731
                _, stock_kernels = decoder_module._conv_kernels(conv_without_bias, own.contiguous())
                _, lever_kernels = decoder_module._conv_kernels(conv_without_bias, own)
                print(f"  {geometry[0]} x {geometry[1]} kernels {'same' if stock_kernels == lever_kernels else 'DIFFERENT'}:"
                      f" stock {dict(stock_kernels)} lever {dict(lever_kernels)}", flush=True)
        return out

    decoder_module._channels_last_conv = checked
    try:
        compare("wan2.1-tiny", latents("wan2.1-tiny", device), "per call")
        verbose = False
        compare("wan2.1", latents("wan2.1", device, 480, 832), "per call 480x832x17")
    finally:
        decoder_module._channels_last_conv = lever_conv
    for geometry, (calls, disagreeing) in disagreeing_calls.items():
        print(f"{geometry[0]} x {geometry[1]}: lever != stock on {disagreeing} of {calls} calls", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-call", action="store_true", help="each lever conv of a tiny decode on its own data")
    parser.add_argument("--device", default="cuda", help="cpu only smoke-tests the script (the lever is CUDA-only)")
    args = parser.parse_args()
    if args.per_call:
        per_call(args.device)
    else:
        switch_by_switch(args.device)


if __name__ == "__main__":
    main()
