#!/usr/bin/env bash
# session 29, command A: where a cold first decode's time goes (s29a.py, empty Triton cache); the decoder's CUDA
# tests that cover the bias epilogue (now one 5-d branch); then the bf16 480x832 decodes side by side with stock.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci TRITON_CACHE_DIR=/tmp/tc
rm -rf /tmp/tc
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 170 python3 .gpu/s29a.py 2>&1 | grep -v "^DEBUG" > $OUT/cold.log; cat $OUT/cold.log
timeout 170 python3 -m pytest -q -x -p no:cacheprovider tests/test_decoder.py -k "channels_last_convs_on_cuda or shortcut_conv_bias_added_after_the_conv_on_cuda or real_configs_on_cuda" > $OUT/t_decoder.log 2>&1; tail -3 $OUT/t_decoder.log
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A3 "^variant" $OUT/bench.log | grep -v "^--"
