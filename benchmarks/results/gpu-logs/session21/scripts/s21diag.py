# session 21: why a compiled CUDA decode compiles a third graph; each compiled tiny decode's distance from stock
import torch, torch_wanops
from torch._dynamo.utils import counters
from torch_wanops.configs import build_vae, latent_channels
for arch in ("wan2.1-tiny",):
    for dtype in (torch.bfloat16, torch.float32):
        torch._dynamo.reset(); counters.clear()
        stock = build_vae(arch, dtype=dtype, device="cuda")
        vae = build_vae(arch, dtype=dtype, device="cuda")
        torch_wanops.compile_vae(vae, enabled=True)
        z = torch.randn(1, latent_channels(arch), 3, 8, 12, generator=torch.Generator().manual_seed(0)).to("cuda", dtype)
        torch_wanops.prewarm(vae, tuple(z.shape))
        print(arch, dtype, "graphs after prewarm", counters["stats"]["unique_graphs"], flush=True)
        with torch.no_grad():
            for i in range(3):
                got = vae.decode(z).sample
                print("decode", i, "graphs", counters["stats"]["unique_graphs"], flush=True)
            expected = stock.decode(z).sample
        print(arch, dtype, "max |diff|", (got.float() - expected.float()).abs().max().item(), "equal", torch.equal(got, expected), flush=True)
