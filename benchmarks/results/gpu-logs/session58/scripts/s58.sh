#!/usr/bin/env bash
# session 58: on an H200, the compiled columns of Wan2.2 bf16 480x832 (session 51's `s51d.sh bench`, never completed
# on an H200); on any other card, `-m cuda` of test_bias_add_contiguous_norm.py (its own list last ran in session 43).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
if [[ "$gpu" == *H200* && "${1:-auto}" != tests ]]; then
  bash benchmarks/results/gpu-logs/session51/scripts/s51d.sh bench
else
  timeout 560 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_bias_add_contiguous_norm.py \
    2>&1 | grep -v "^DEBUG" | tee $OUT/bias_add_contiguous_norm.log | tail -n 5
fi
