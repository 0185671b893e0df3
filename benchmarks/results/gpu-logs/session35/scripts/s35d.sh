#!/usr/bin/env bash
# session 35, command D: small conv weights copied once per decode (DECODE_WEIGHT_COPIES) and channel_norm_kernel's
# tile for split geometries: CUDA tests, then Wan2.2 and Wan2.1 bf16 480x832 side by side with the switch off.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_rms_norm_cat_pad_5d.py -k "cuda and (kernel_is_atens or wide_raw)" > $OUT/tests_norm.log 2>&1; tail -3 $OUT/tests_norm.log
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_channels_last_copy.py tests/test_decoder.py -k "(cuda and (wan22_decode_copies or decoder_weights)) or (non_default_switches and (per-call-weight-copies or unsplit))" > $OUT/tests_copies.log 2>&1; tail -3 $OUT/tests_copies.log
timeout 220 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --per-call-weight-copies --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A6 "^variant"
cat $OUT/meta.txt
