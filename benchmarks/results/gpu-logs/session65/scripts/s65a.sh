#!/usr/bin/env bash
# session 65 A: whichever card comes. On an H200, session 59's s59a.sh (the H200 table's stale fp16 and fp32
# 480x832 rows on today's decoder). On an H100, the rows its table lacks: bf16 480x832 under bf16 autocast (as
# serving engines decode; the H200 table's row is session 49's), both models, then the fp32 720x1280 rows.
if nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | grep -q H200; then
  exec bash benchmarks/results/gpu-logs/session59/scripts/s59a.sh
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
mkdir -p $OUT/autocast $OUT/fp32_720
timeout 240 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --autocast --compile-cases \
  --repeat 5 --out $OUT/autocast 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/autocast/bench.log \
  | tail -n 8
timeout 330 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes fp32 --sizes 720x1280 --repeat 3 \
  --out $OUT/fp32_720 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/fp32_720/bench.log | tail -n 8
