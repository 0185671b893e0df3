#!/usr/bin/env bash
# session 59 H: prewarm's timed log line (the compile path) on CUDA: the compile tests that prewarm on CUDA, and
# prewarm's own tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_compile.py \
  -k "takes_the_levers or prewarm" 2>&1 | grep -v "^DEBUG" | tee $OUT/tests.log | tail -n 3
