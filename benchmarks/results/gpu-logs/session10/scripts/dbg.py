import logging, torch
from torch.profiler import profile, ProfilerActivity
from torch_wanops import decoder as D
logging.basicConfig(level=logging.INFO, format="%(message)s")
torch.manual_seed(0)
for channels, shape in ((32, (2, 32, 3, 6, 8)), (384, (1, 384, 3, 62, 106))):
    conv = torch.nn.Conv3d(channels, channels, 3).cuda()
    x = torch.randn(shape, device="cuda")
    for label, inp in (("contig", x), ("cl", x.contiguous(memory_format=torch.channels_last_3d)), ("contig2", x)):
        with profile(activities=[ProfilerActivity.CUDA]) as p:
            conv._conv_forward(inp, conv.weight, None); torch.cuda.synchronize()
        ev = p.events()
        pass
        pass
        print("   _conv_kernels:", D._conv_kernels(lambda t: conv._conv_forward(t, conv.weight, None), inp))
    with torch.no_grad():
        D._channels_last_conv(conv, lambda: x.contiguous(memory_format=torch.channels_last_3d))
    print("verdicts", list(D._channels_last_conv_verdicts.values()))
