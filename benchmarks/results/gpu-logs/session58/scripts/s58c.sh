#!/usr/bin/env bash
# session 58 C: on an H200, session 51's `s51d.sh bench` (the compiled columns of Wan2.2 bf16 480x832); on any other
# card, the compiled columns of Wan2.2 fp16 480x832 (the H100 table has none; fp16 is one of the dtypes whose graphs
# compile_vae runs on CUDA).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
if [[ "$gpu" == *H200* ]]; then
  bash benchmarks/results/gpu-logs/session51/scripts/s51d.sh bench
  exit
fi
timeout 560 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes fp16 --sizes 480x832 \
  --compile-cases fp16:480x832 --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" \
  | tee $OUT/bench_compiled.log | tail -n 8
