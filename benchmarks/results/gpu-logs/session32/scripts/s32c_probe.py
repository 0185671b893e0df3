"""Session 32 C: which parts of the batched stage (through the second up block with LATENT_STAGE_THROUGH_SECOND_UP_BLOCK)
keep the one-frame bits, per model and size (bf16): the stage run both ways on latent frames 1-5 after a stock
first chunk, as _latent_stage_frames' check runs it; each output, up block input and cache slot compared (bits and
strides), mismatches listed by slot."""

import torch

import torch_wanops
from torch_wanops import decoder as D
from torch_wanops.configs import build_vae, latent_shape

print(torch.__version__, torch.cuda.get_device_name())
for model in ("wan2.2", "wan2.1"):
    vae = build_vae(model, dtype=torch.bfloat16, device="cuda", vae_class=torch_wanops.OmniAutoencoderKLWan)
    dec = vae.decoder
    for size in ((240, 416), (480, 832)):
        z = torch.randn(latent_shape(model, *size, 21), generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)
        with torch.no_grad():
            x = vae.post_quant_conv(z)
            for up_blocks in (1, 2):
                cache = [None] * 64
                dec.decode_chunk(x[:, :, :1], cache, [0], True)
                group = x[:, :, 1:6]
                D._latent_stage_frames(dec, group, list(cache), True, up_blocks)  # the conv checks, warm
                batched_cache = list(cache)
                out, source, _ = D._latent_stage(dec, group, batched_cache, True, up_blocks)
                outs, sources = D._frames(out, 5), D._frames(source, 5)
                ref_outs, ref_sources, slot = D._latent_stage_by_frame(dec, group, cache, True, up_blocks)
                bad = [f"out{t}" for t in range(5) if not D._same_bits_and_strides(outs[t], ref_outs[t])]
                bad += [f"src{t}" for t in range(5) if not D._same_bits_and_strides(sources[t], ref_sources[t])]
                for i in range(slot):
                    a, b = batched_cache[i], cache[i]
                    if not D._same_bits_and_strides(a, b):
                        bad.append(f"cache{i}" + ("" if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor)
                                                   else f"{'(strides)' if a.stride() != b.stride() else ''}"))
                print(f"{model} {size} up_blocks={up_blocks} (stage_up_blocks says {D.stage_up_blocks(dec, group)}): "
                      f"{slot} slots; mismatches: {bad or 'none'}", flush=True)
    del vae, dec
    torch.cuda.empty_cache()
