#!/usr/bin/env bash
# session 26, command B: the 720x1280 cells on the session-25 kernels (eager, side by side with stock):
# Wan2.1 fp32, Wan2.1 bf16, Wan2.2 bf16. decode.json is copied out after each cell.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
for cell in "wan2.1 fp32" "wan2.1 bf16" "wan2.2 bf16"; do
  set -- $cell
  timeout 240 python3 benchmarks/bench_decode.py --models $1 --dtypes $2 --sizes 720x1280 --compile-cases --out /tmp/b720 >> $OUT/bench720.log 2>&1
  cp /tmp/b720/decode.json $OUT/decode720.json
  grep -A6 "^variant" $OUT/bench720.log | tail -n 4
done
