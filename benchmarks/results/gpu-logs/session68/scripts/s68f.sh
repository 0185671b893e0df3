#!/usr/bin/env bash
# For the next H200: the H200 table's last rows from older runs with today's decoder, eager, interleaved rounds: bf16
# 720x1280 (session 46's, medians of 3) and bf16 480x832 under bf16 autocast (session 49's, medians of 5). On any
# other card nothing runs (the H100 table has both on session 51's decoder).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
[[ "$gpu" == *H200* ]] || exit 0
mkdir -p $OUT/bf16_720 $OUT/autocast
timeout 300 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 720x1280 --compile-cases \
  --repeat 3 --out $OUT/bf16_720 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bf16_720/bench.log | tail -n 6
timeout 240 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases --autocast \
  --repeat 5 --out $OUT/autocast 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/autocast/bench.log | tail -n 6
