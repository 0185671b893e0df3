#!/usr/bin/env bash
# session 59 C: on an H200, the H200 table's fp32 720x1280 rows with today's decoder (last measured in sessions 21
# and 26). On any other card nothing runs.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
[[ "$gpu" == *H200* ]] || exit 0
timeout 570 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes fp32 --sizes 720x1280 \
  --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 6
