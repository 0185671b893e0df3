"""session 22: which part of the compiled Wan2.1 bf16 decode (3x60x104 latents) leaves stock's bits: parts run
eagerly (torch.compiler.disable, graph breaks allowed) and the per-chunk outputs compared with stock's."""
import torch

import torch_wanops
from torch_wanops import decoder as decoder_module
from torch_wanops.configs import build_vae, latent_channels

PARTS = {"attention": ["attention_block"], "resample": ["resample"], "attention+resample": ["attention_block", "resample"]}
originals = {name: getattr(decoder_module, name) for name in ("attention_block", "resample")}


def recording(decoder, outputs):
    forward = decoder.forward

    def record(*args, **kwargs):
        out = forward(*args, **kwargs)
        outputs.append(out.detach().clone())
        return out

    decoder.forward = record


stock = build_vae("wan2.1", dtype=torch.bfloat16, device="cuda")
z = torch.randn(1, latent_channels("wan2.1"), 3, 60, 104, generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)
stock_chunks = []
recording(stock.decoder, stock_chunks)
with torch.no_grad():
    expected = stock.decode(z).sample
for label, names in PARTS.items():
    for name, function in originals.items():
        setattr(decoder_module, name, torch.compiler.disable(function) if name in names else function)
    torch._dynamo.reset()
    vae = build_vae("wan2.1", dtype=torch.bfloat16, device="cuda")
    torch_wanops.compile_vae(vae, enabled=True, fullgraph=False)
    torch_wanops.prewarm(vae, tuple(z.shape))
    got_chunks = []
    recording(vae.decoder, got_chunks)
    with torch.no_grad():
        got = vae.decode(z).sample
    print("eager:", label, "equal", torch.equal(got, expected), "chunks equal",
          [torch.equal(a, b) for a, b in zip(got_chunks, stock_chunks)],
          "max", (got.float() - expected.float()).abs().max().item(), flush=True)
