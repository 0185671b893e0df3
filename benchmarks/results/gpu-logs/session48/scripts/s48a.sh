#!/usr/bin/env bash
# session 48, command A (prepared, not run: no machine lent): diffusers_code's tests under torch 2.11 (Dynamo reading
# runs_recorded_code as a constant); with the code check in walkable(), the real configs' decodes on CUDA and the
# compile path's CUDA tests; the autocast routing's CUDA tests (from session 47). Sum of timeouts: 590 s.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 60 $P tests/test_diffusers_code.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_code.log | tail -n 1
timeout 120 $P tests/test_decoder.py -k real_configs_on_cuda 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_real.log | tail -n 1
timeout 300 $P tests/test_compile.py -k cuda 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_compile.log | tail -n 1
timeout 110 $P -m cuda tests/test_autocast.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_autocast.log | tail -n 1
