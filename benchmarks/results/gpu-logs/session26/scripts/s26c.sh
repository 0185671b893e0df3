#!/usr/bin/env bash
# session 26, command C: Wan2.1 fp16 480x832 side by side, eager and compiled (CUDA fp16 graphs are now
# taken as giving stock's bits; never timed), on the session-25 kernels.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 430 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp16 --sizes 480x832 --compile-cases fp16:480x832 --out /tmp/b480 > $OUT/bench480fp16.log 2>&1
cp /tmp/b480/decode.json $OUT/decode480fp16.json
grep -A8 "^variant" $OUT/bench480fp16.log; grep -c "compiled call failed" $OUT/bench480fp16.log; grep -v "^DEBUG" $OUT/bench480fp16.log | tail -n 3
