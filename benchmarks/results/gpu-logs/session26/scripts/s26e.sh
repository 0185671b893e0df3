#!/usr/bin/env bash
# session 26, command E: a second side-by-side run of Wan2.1 fp32 720x1280 on the found tail splits (D's code),
# then Wan2.2 fp32 480x832 (its row is from session 19's code).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 150 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 720x1280 --compile-cases --out /tmp/be >> $OUT/bench_e.log 2>&1
cp /tmp/be/decode.json $OUT/decode_e.json
timeout 120 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes fp32 --sizes 480x832 --compile-cases --out /tmp/be >> $OUT/bench_e.log 2>&1
cp /tmp/be/decode.json $OUT/decode_e.json
grep -A4 "^variant\|not bit-exact\|slower than" $OUT/bench_e.log
