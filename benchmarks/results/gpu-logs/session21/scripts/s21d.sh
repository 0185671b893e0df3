#!/usr/bin/env bash
# session 21, command D: Wan2.2 bf16 480x832 stock, eager, diffusers compiled, wanops compiled side by side (current code)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 400 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; grep "median" $OUT/bench.log
