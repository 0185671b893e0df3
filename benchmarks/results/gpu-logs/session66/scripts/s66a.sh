#!/usr/bin/env bash
# session 66 A: any card. The CUDA runs session 65 D cut short: conv3d_chunked's tail tests (the run count as a
# runtime argument) and the real configs' fp32 decodes against stock, each in full.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" | tee -a $OUT/gpu.txt
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short --durations=5"
timeout 250 $P tests/test_conv3d_chunked.py -k tail 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_conv_tail.log | tail -n 9
timeout 300 $P -m cuda tests/test_decoder.py -k "real_configs_on_cuda and float32" 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/tests_real_fp32.log | tail -n 9
