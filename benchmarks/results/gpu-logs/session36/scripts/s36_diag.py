"""Where DECODE_WEIGHT_COPIES changes an fp32 tiny decode: every conv call's input, weight and output, both ways."""
import os, sys
sys.path[:0] = [os.getcwd(), os.path.join(os.getcwd(), "tests")]
import torch
import torch.nn.functional as F
from torch_wanops import decoder as decoder_module
from test_decoder import latents, pair

calls = []
for name in ("conv3d", "conv2d"):
    original = getattr(F, name)
    def recording(x, weight, *args, _original=original, _name=name, **kwargs):
        out = _original(x, weight, *args, **kwargs)
        calls.append((_name, x.clone(), x.stride(), weight.clone(), weight.stride(), weight.data_ptr() % 512,
                      out.clone(), out.stride(), args[0] is not None if args else None,
                      torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32))
        return out
    setattr(F, name, recording)
    setattr(torch.nn.modules.conv.F, name, recording)

for arch, frames, h, w, seed in (("wan2.1-tiny", 2, 4, 6, 11), ("wan2.2-tiny", 2, 5, 3, 19)):
    stock, omni = pair(arch, device="cuda")
    z = latents(arch, torch.float32, "cuda", frames=frames, height=h, width=w, seed=seed)
    runs = {}
    for copies in (False, True, False, True):
        decoder_module.DECODE_WEIGHT_COPIES = copies
        calls.clear()
        with torch.no_grad():
            out = omni.decode(z, return_dict=False)[0]
        runs.setdefault(copies, []).append((out, list(calls)))
    with torch.no_grad():
        expected = stock.decode(z, return_dict=False)[0]
    print(arch, "stock==off", [torch.equal(expected, o) for o, _ in runs[False]],
          "stock==on", [torch.equal(expected, o) for o, _ in runs[True]])
    off, on = runs[False][1][1], runs[True][1][1]
    print(" calls", len(off), len(on))
    for i, (a, b) in enumerate(zip(off, on)):
        same_in, same_w, same_out = torch.equal(a[1], b[1]), torch.equal(a[3], b[3]), torch.equal(a[6], b[6])
        if not (same_in and same_out and a[4] == b[4]):
            print(f"  call {i} {a[0]} x {tuple(a[1].shape)} {a[2]} vs {b[2]}; w {tuple(a[3].shape)} {a[4]} vs {b[4]} "
                  f"ptr%512 {a[5]} vs {b[5]}; same x {same_in} w {same_w} out {same_out}; out strides {a[7]} {b[7]} "
                  f"bias {a[8]} tf32 {a[9:]}")
            if not same_out:
                break
