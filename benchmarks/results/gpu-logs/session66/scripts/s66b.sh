#!/usr/bin/env bash
# session 66 B: the warm card after A. conv3d_chunked's whole CUDA list (session 65's runtime run count changed its
# kernel; only the tail tests had run on CUDA since), then the real configs' 16-bit decodes against stock.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short --durations=5"
timeout 300 $P -m cuda tests/test_conv3d_chunked.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_conv.log | tail -n 9
timeout 200 $P -m cuda tests/test_decoder.py -k "real_configs_on_cuda and not float32" 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/tests_real_16bit.log | tail -n 9
