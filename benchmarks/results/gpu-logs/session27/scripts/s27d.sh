#!/usr/bin/env bash
# session 27, command D: 28aad00 (FUSED_SHORTCUT_BIASES on): fp16 whole decodes on CUDA, then the bf16 cells of
# issue 6 side by side with stock (480x832 both models with 5 repeats, Wan2.2 720x1280).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "channels_last_convs_on_cuda and float16" > $OUT/t_dec.log 2>&1
grep -v "^DEBUG" $OUT/t_dec.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
for model in wan2.2 wan2.1; do
  timeout 150 python3 benchmarks/bench_decode.py --models $model --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --out /tmp/bd >> $OUT/bench.log 2>&1
  cp /tmp/bd/decode.json $OUT/decode.json
done
timeout 180 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 720x1280 --compile-cases --out /tmp/bd >> $OUT/bench.log 2>&1
cp /tmp/bd/decode.json $OUT/decode.json
grep -A4 "^variant\|not bit-exact\|slower than" $OUT/bench.log
