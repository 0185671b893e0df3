"""Wan VAE configurations: the real Wan2.1 / Wan2.2 ones and small ones for CPU tests and the CPU bench."""

from __future__ import annotations

from typing import Any

import torch
from diffusers import AutoencoderKLWan
from diffusers.utils import logging as diffusers_logging

# Wan2.1: diffusers' default constructor.
WAN21: dict[str, Any] = {}

# Wan2.2 TI2V-5B VAE.
WAN22: dict[str, Any] = dict(
    base_dim=160,
    decoder_base_dim=256,
    z_dim=48,
    is_residual=True,
    in_channels=12,
    out_channels=12,
    patch_size=2,
    scale_factor_spatial=16,
    latents_mean=[0.0] * 48,
    latents_std=[1.0] * 48,
)

# Same architecture (block types, up/down structure, caches, DupUp3D, patching), few channels, and one residual
# block fewer per up block, which shortens every CPU test decode and compile: two, not three (a block's first, which
# may change its width, and one after it), so each kind of block and block-to-block handoff stays.
WAN21_TINY: dict[str, Any] = dict(base_dim=8, z_dim=4, num_res_blocks=1, latents_mean=[0.0] * 4,
                                  latents_std=[1.0] * 4)
WAN22_TINY: dict[str, Any] = dict(WAN22, base_dim=8, decoder_base_dim=8, z_dim=4, num_res_blocks=1,
                                  latents_mean=[0.0] * 4, latents_std=[1.0] * 4)

CONFIGS: dict[str, dict[str, Any]] = {
    "wan2.1": WAN21,
    "wan2.2": WAN22,
    "wan2.1-tiny": WAN21_TINY,
    "wan2.2-tiny": WAN22_TINY,
}


def spatial_scale(name: str) -> int:
    """Pixels per latent cell along H and W."""
    return 16 if CONFIGS[name].get("patch_size") else 8


def latent_channels(name: str) -> int:
    return CONFIGS[name].get("z_dim", 16)


def check_device(device: torch.device | str | None) -> torch.device | None:
    """``device`` as a torch.device (None stays None); TypeError / ValueError naming it if it is not one."""
    if device is None or isinstance(device, torch.device):
        return device
    if not isinstance(device, str):
        raise TypeError(f"device must be a torch.device, a str or None, got {type(device).__name__}")
    try:
        return torch.device(device)
    except RuntimeError as exc:
        raise ValueError(f"device must name a torch device (e.g. 'cuda:0', 'cpu'), got {device!r}") from exc


def check_decode_size(height: int, width: int, frames: int, scale: int) -> None:
    """ValueError unless a VAE of ``scale`` pixels per latent cell decodes to ``frames`` x ``height`` x ``width``."""
    if height < 1 or width < 1 or height % scale or width % scale:
        raise ValueError(f"height and width must be positive multiples of {scale} for this model, got {height}x{width}")
    if frames < 1 or (frames - 1) % 4:
        raise ValueError(f"frames must be 4k + 1 (1, 5, ..., 81), got {frames}")


def latent_shape(name: str, height: int, width: int, frames: int, batch: int = 1) -> tuple[int, int, int, int, int]:
    """Latent shape decoding to ``frames`` frames of ``height`` x ``width`` (frames = 4k + 1)."""
    scale = spatial_scale(name)
    check_decode_size(height, width, frames, scale)
    return (batch, latent_channels(name), (frames - 1) // 4 + 1, height // scale, width // scale)


def build_vae(name: str, *, seed: int = 0, dtype: torch.dtype = torch.float32, device: str | torch.device = "cpu",
              vae_class: type[AutoencoderKLWan] = AutoencoderKLWan) -> AutoencoderKLWan:
    """A randomly initialised (seeded) Wan VAE of configuration ``name``, in eval mode."""
    if name not in CONFIGS:
        raise ValueError(f"model must be one of {sorted(CONFIGS)}, got {name!r}")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        vae = vae_class(**CONFIGS[name])
    # ModelMixin.to(dtype) warns about fp32-kept modules; the Wan VAE has none.
    verbosity = diffusers_logging.get_verbosity()
    diffusers_logging.set_verbosity_error()
    try:
        return vae.eval().to(device=device, dtype=dtype)
    finally:
        diffusers_logging.set_verbosity(verbosity)
