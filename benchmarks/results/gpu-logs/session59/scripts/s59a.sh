#!/usr/bin/env bash
# session 59 A: on an H200, the H200 table's stale eager rows with today's decoder: fp16 and fp32 at 480x832 (last
# measured in sessions 15-31, before most of the levers). On any other card nothing runs (the H100 table is current).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
[[ "$gpu" == *H200* ]] || exit 0
timeout 270 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes fp16 fp32 --sizes 480x832 \
  --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 12
