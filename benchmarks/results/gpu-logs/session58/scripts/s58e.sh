#!/usr/bin/env bash
# session 58 E: only on an H200, session 51's `s51d.sh bench` (the compiled columns of Wan2.2 bf16 480x832); on any
# other card nothing (the H100 table has them).
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
if [[ "$gpu" == *H200* ]]; then
  bash benchmarks/results/gpu-logs/session51/scripts/s51d.sh bench
fi
