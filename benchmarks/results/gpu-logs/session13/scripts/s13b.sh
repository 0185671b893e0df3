#!/usr/bin/env bash
# session 13, command B: RAW_CONV_OUTPUT_NORMS (conv1's bias added by the norm, channel norm in ATen's order):
# op and decoder CUDA tests, then bf16 480x832 side by side with the lever off and on
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
timeout 290 bash -c "$(declare -f pyt); pyt tests/test_rms_norm_cat_pad_5d.py -k 'cuda or opcheck or bias'" > $OUT/t_rms.log 2>&1 &
timeout 290 bash -c "$(declare -f pyt); pyt tests/test_decoder.py -k 'cuda and (non_default_switches or real_configs or channels_last_convs_on_cuda)'" > $OUT/t_decoder.log 2>&1 &
wait
tail -n 12 $OUT/t_rms.log; tail -n 12 $OUT/t_decoder.log
timeout 240 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
    --biased-conv-outputs --out $OUT/bench > $OUT/bench.log 2>&1
grep -h -B2 -A12 "^variant\|^| model" $OUT/bench.log | head -60; tail -n 5 $OUT/bench.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
