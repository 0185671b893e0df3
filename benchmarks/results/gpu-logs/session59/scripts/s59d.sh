#!/usr/bin/env bash
# session 59 D: the Triton compiles of a cold first decode, kernel by kernel (s59d_compiles.py, an empty Triton cache).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc59
rm -rf /tmp/tc59
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 300 python3 benchmarks/results/gpu-logs/session59/scripts/s59d_compiles.py 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/compiles.log
