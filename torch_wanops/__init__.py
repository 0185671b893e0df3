"""torch_wanops: bit-exact, faster Wan VAE decoding through fused PyTorch custom ops.

Importing the package registers ``torch.ops.wanops.cat_pad_5d``,
``dup_up3d_add``, ``rms_norm_cat_pad_5d``, ``bias_add_contiguous``,
``bias_add_contiguous_norm``, ``upsample_nearest_2x``, ``conv3d_chunked``, ``channels_last_copy``,
``wan_rms_norm`` and ``refresh_cache``.
"""

import os as _os

# An installed wheel carries the kernels as torch_wanops/csrc_triton; in a source
# checkout they sit beside the package, so let the package path reach them there.
_checkout_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(__path__[0], "csrc_triton")) and _os.path.isfile(
    _os.path.join(_checkout_root, "csrc_triton", "cat_pad_5d.py")
):
    __path__.append(_checkout_root)

from torch_wanops._backend import reference_kernels  # noqa: E402
from torch_wanops.apply import apply_to, restore  # noqa: E402
from torch_wanops.compile import compile_callable_with_fallback, compile_vae, prewarm  # noqa: E402
from torch_wanops.decoder import OmniAutoencoderKLWan, OmniWanDecoder  # noqa: E402
from torch_wanops.ops import (  # noqa: E402
    bias_add_contiguous,
    bias_add_contiguous_norm,
    cat_pad_5d,
    channels_last_copy,
    conv3d_chunked,
    dup_up3d_add,
    refresh_cache,
    rms_norm_cat_pad_5d,
    upsample_nearest_2x,
    wan_rms_norm,
)

__version__ = "0.1.0"

__all__ = [
    "OmniAutoencoderKLWan",
    "OmniWanDecoder",
    "apply_to",
    "bias_add_contiguous",
    "bias_add_contiguous_norm",
    "cat_pad_5d",
    "channels_last_copy",
    "compile_callable_with_fallback",
    "compile_vae",
    "conv3d_chunked",
    "prewarm",
    "refresh_cache",
    "restore",
    "dup_up3d_add",
    "rms_norm_cat_pad_5d",
    "reference_kernels",
    "upsample_nearest_2x",
    "wan_rms_norm",
    "__version__",
]
