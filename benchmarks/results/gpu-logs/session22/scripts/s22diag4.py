"""session 22: the mid block's attention at 480x832 (one frame) compiled against eager: as it is, and with its SDPA as one custom op."""
import torch
import torch.nn.functional as F

import torch_wanops
from torch_wanops import decoder as decoder_module
from torch_wanops.compile import graph_settings
from torch_wanops.configs import build_vae


@torch.library.custom_op("s22::sdpa", mutates_args=())
def opaque_sdpa(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(q, k, v)


@opaque_sdpa.register_fake
def _(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


vae = build_vae("wan2.1", dtype=torch.bfloat16, device="cuda")
block = vae.decoder.mid_block.attentions[0]
x = torch.randn(1, 384, 1, 60, 104, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)
with torch.no_grad():
    expected = decoder_module.attention_block(block, x)
    for label in ("as it is", "sdpa as one op"):
        torch._dynamo.reset()
        if label == "sdpa as one op":
            decoder_module.F = type("F", (), {"scaled_dot_product_attention": staticmethod(opaque_sdpa)})
        with graph_settings():
            got = torch.compile(decoder_module.attention_block, fullgraph=True)(block, x)
        print(label, "equal", torch.equal(got, expected), "max", (got.float() - expected.float()).abs().max().item(),
              got.stride(), expected.stride(), flush=True)
