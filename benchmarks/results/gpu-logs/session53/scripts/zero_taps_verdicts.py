"""Session 53: which first-chunk geometries the zero-frame taps' check takes in a real config's decode (the tiny
configs' CUDA test prints theirs), with session 52's diffs applied."""
import argparse

from torch_wanops import decoder as decoder_module
from torch_wanops.bench import add_decode_case_arguments, describe_cuda_case, warm_cuda_decodes

parser = argparse.ArgumentParser()
add_decode_case_arguments(parser)
args = parser.parse_args()
print(describe_cuda_case(args))
decoder_module.clear_conv_verdicts()
for _name, _decode in warm_cuda_decodes(args, ["wanops-eager"]):
    pass
verdicts = decoder_module._zero_frame_taps_verdicts
for (geometry, zero_frames), verdict in verdicts.items():
    print(verdict, zero_frames, geometry)
print(f"{sum(map(bool, verdicts.values()))} of {len(verdicts)} geometries skip")
