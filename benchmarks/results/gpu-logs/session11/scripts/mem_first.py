"""Session 11: first-decode peak with the one-probe check vs session 10's two-probe check (same process)."""
import sys, collections, torch, argparse
from torch_wanops import decoder as D
from torch_wanops.bench import add_decode_case_arguments, decode_case, variant


def old_check(padded, stock_layout, conv_without_bias, bias_epilogue, frames):
    # session 10's check (c26209e): probe in padded's layout, contiguous copies, two lever convs
    lever = lambda probe: bias_epilogue(conv_without_bias(probe))
    generator = torch.Generator(padded.device).manual_seed(0)
    with torch.no_grad():
        probe = torch.empty_like(padded).normal_(generator=generator)
        stock_kernels = D._conv_kernels(conv_without_bias, probe.contiguous())[1]
        lever_kernels = D._conv_kernels(conv_without_bias, probe)[1]
        if not stock_kernels or lever_kernels != stock_kernels:
            return False
        reference = stock_layout(probe)
        candidate = lever(probe)
    del probe
    if candidate.dim() != reference.dim():
        reference = D._frames_to_5d(reference, frames)
    return D._same_bits(candidate, reference)


p = argparse.ArgumentParser(); add_decode_case_arguments(p); args = p.parse_args()
vae, z = decode_case(args, "cuda")
new_check = D._lever_gives_stock_bits
results = {}
for name, check in [("new", new_check), ("old", old_check), ("new2", new_check)]:
    D._lever_gives_stock_bits = check
    with variant(vae, "wanops-eager"), torch.no_grad():
        D._channels_last_conv_verdicts.clear()
        torch.cuda.synchronize(); base = torch.cuda.memory_allocated(); torch.cuda.reset_peak_memory_stats()
        out = vae.decode(z, return_dict=False)[0]
        torch.cuda.synchronize()
        first = (torch.cuda.max_memory_allocated() - base) / 2**30
        verdicts = dict(D._channels_last_conv_verdicts)
        torch.cuda.reset_peak_memory_stats()
        out2 = vae.decode(z, return_dict=False)[0]
        torch.cuda.synchronize()
        later = (torch.cuda.max_memory_allocated() - base) / 2**30
    refused = [k[:2] for k, v in verdicts.items() if not v]
    print(f"{args.model} {args.dtype} {name} check: first decode peak {first:.2f} GiB above weights, later {later:.2f}; "
          f"{len(verdicts)} geometries, refused {refused}; first == later {torch.equal(out, out2)}", flush=True)
    results[name] = out2
    del out, out2
with variant(vae, "diffusers-eager"), torch.no_grad():
    vae.decode(z, return_dict=False)
    torch.cuda.synchronize(); base = torch.cuda.memory_allocated(); torch.cuda.reset_peak_memory_stats()
    ref = vae.decode(z, return_dict=False)[0]
    torch.cuda.synchronize()
    print(f"{args.model} {args.dtype} stock: peak {(torch.cuda.max_memory_allocated() - base) / 2**30:.2f} GiB above weights; "
          f"wanops == stock: {[torch.equal(ref, v) for v in results.values()]}", flush=True)
