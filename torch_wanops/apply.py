"""Switch a diffusers Wan VAE (or pipeline, or bare decoder) to OmniWanDecoder and back.

The decoder object's class changes, and a stock ``AutoencoderKLWan`` gets an instance ``_decode``
(decoder.decode_batching_latent_stage: stock's own ``_decode`` where ``decoder.BATCHED_LATENT_STAGE``
is off or does not apply). No weights are copied and nothing global is patched, so every other Wan VAE
in the process stays stock.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

from diffusers.models.autoencoders.autoencoder_kl_wan import AutoencoderKLWan, WanDecoder3d

from torch_wanops.decoder import OmniWanDecoder, decode_batching_latent_stage

# compile_vae marks the per-chunk forward it installs on a decoder instance with this attribute.
COMPILED_FORWARD_MARK = "_wanops_compiled_forward"


def is_compiled_forward(forward: object) -> bool:
    return getattr(forward, COMPILED_FORWARD_MARK, False) is True


# apply_to marks the frame loop it installs as a VAE's instance _decode with this attribute.
BATCHED_DECODE_MARK = "_wanops_batched_decode"


def is_batched_decode(decode: object) -> bool:
    return getattr(decode, BATCHED_DECODE_MARK, False) is True

T = TypeVar("T")


def find_decoder(obj: Any, argument: str = "obj") -> WanDecoder3d:
    """The Wan decoder inside ``obj``: an AutoencoderKLWan, an object with a ``.vae`` that is one, or a WanDecoder3d."""
    if isinstance(obj, WanDecoder3d):
        decoder = obj
    elif isinstance(obj, AutoencoderKLWan):
        decoder = obj.decoder
    elif isinstance(getattr(obj, "vae", None), AutoencoderKLWan):
        decoder = obj.vae.decoder
    else:
        raise TypeError(
            f"{argument} must be a diffusers AutoencoderKLWan, an object whose .vae is one (a pipeline), "
            f"or a WanDecoder3d; got {type(obj).__name__}"
        )
    if type(decoder) not in (WanDecoder3d, OmniWanDecoder):
        raise TypeError(
            f"{argument} holds a decoder of type {type(decoder).__name__}, a subclass of WanDecoder3d that "
            "torch_wanops does not know; it is left unchanged"
        )
    return decoder


def find_vae(obj: Any) -> AutoencoderKLWan | None:
    """The AutoencoderKLWan that ``obj`` is or holds as ``.vae``; None for a bare decoder."""
    if isinstance(obj, AutoencoderKLWan):
        return obj
    vae = getattr(obj, "vae", None)
    return vae if isinstance(vae, AutoencoderKLWan) else None


def apply_to(obj: T) -> T:
    """Run ``obj``'s Wan decoder through the wanops ops, in place; idempotent; returns ``obj``."""
    find_decoder(obj).__class__ = OmniWanDecoder
    vae = find_vae(obj)
    if vae is not None and type(vae) is AutoencoderKLWan and "_decode" not in vae.__dict__:
        decode = functools.partial(decode_batching_latent_stage, vae)
        setattr(decode, BATCHED_DECODE_MARK, True)
        vae._decode = decode
    return obj


def restore(obj: T) -> T:
    """Undo :func:`apply_to` (and any :func:`torch_wanops.compile_vae`) on ``obj``; returns ``obj``."""
    decoder = find_decoder(obj)
    if is_compiled_forward(decoder.__dict__.get("forward")):
        del decoder.forward  # the per-chunk forward compile_vae installed; any other (a hook's) stays
    decoder.__class__ = WanDecoder3d
    vae = find_vae(obj)
    if vae is not None and is_batched_decode(vae.__dict__.get("_decode")):
        del vae._decode
    return obj
