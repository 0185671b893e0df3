"""Session 30 F: decoder.BATCHED_LATENT_STAGE on the H200: whole bf16 480x832x81 decodes of both models against
stock (torch.equal), the latent-stage verdicts, and decode time with the switch off and on, interleaved."""

import statistics
import time

import torch

import torch_wanops
from torch_wanops import decoder as D
from torch_wanops.configs import build_vae, latent_shape


def timed(vae, z):
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.no_grad():
        out = vae.decode(z, return_dict=False)[0]
    torch.cuda.synchronize()
    return out, time.perf_counter() - start


print(torch.__version__, torch.cuda.get_device_name(), flush=True)
for model in ("wan2.2", "wan2.1"):
    vae = build_vae(model, dtype=torch.bfloat16, device="cuda")
    z = torch.randn(latent_shape(model, 480, 832, 81), generator=torch.Generator().manual_seed(0)).to("cuda", torch.bfloat16)
    D.BATCHED_LATENT_STAGE = False
    stock, stock_s = timed(vae, z)
    torch_wanops.apply_to(vae)
    times = {False: [], True: []}
    for repeat in range(4):
        for switch in (False, True):
            D.BATCHED_LATENT_STAGE = switch
            out, seconds = timed(vae, z)
            if repeat == 0:
                print(f"{model} switch {switch}: first decode {seconds:.2f} s, equal to stock {torch.equal(out, stock)}, "
                      f"strides {out.stride() == stock.stride()}", flush=True)
            else:
                times[switch].append(seconds)
                assert torch.equal(out, stock), (model, switch)
    print(f"{model}: verdicts {list(D._latent_stage_verdicts.values())}")
    off, on = statistics.median(times[False]), statistics.median(times[True])
    print(f"{model}: stock {stock_s:.3f} s (first call), switch off {off:.3f} s, on {on:.3f} s ({off / on:.3f}x), "
          f"all decodes equal to stock", flush=True)
    torch_wanops.restore(vae)
    del vae, stock, out
    torch.cuda.empty_cache()
