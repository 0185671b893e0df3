#!/usr/bin/env bash
# session 59 A: on an H200, the H200 table's stale eager rows with today's decoder: fp16 and fp32 at 480x832 (last
# measured in sessions 15-31, before most of the levers). On any other card nothing runs (the H100 table is current).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
[[ "$gpu" == *H200* ]] || exit 0
for dtype in fp16 fp32; do
  repeat=5; [ $dtype = fp32 ] && repeat=3
  mkdir -p $OUT/$dtype
  timeout 280 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes $dtype --sizes 480x832 \
    --repeat $repeat --out $OUT/$dtype 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" \
    | tee $OUT/$dtype/bench.log | tail -n 6
done
