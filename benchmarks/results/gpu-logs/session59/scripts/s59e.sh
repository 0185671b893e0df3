#!/usr/bin/env bash
# session 59 E: a first decode in a process whose Triton cache an earlier process filled (a server restarted with
# TRITON_CACHE_DIR kept): s59b_cold.py twice on one cache directory, the first run filling it.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc59e
rm -rf /tmp/tc59e
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
for run in empty filled; do
  timeout 200 python3 benchmarks/results/gpu-logs/session59/scripts/s59b_cold.py 2>&1 | grep -v "^DEBUG" \
    > $OUT/cache_$run.log
  grep "decode" $OUT/cache_$run.log
done
