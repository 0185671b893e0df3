#!/usr/bin/env bash
# session 70 B: the decoder's and the latent stage's CUDA tests (session 69's B stopped at its limit), the autograd
# routing's CUDA cases first.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -m pytest -q -p no:cacheprovider -m cuda tests/test_decoder.py -k "autograd or grad_mode" 2>&1 | tail -n 5 \
  | tee $OUT/autograd.log
timeout ${LIMIT:-480} python3 -m pytest -q -p no:cacheprovider -m cuda tests/test_decoder.py tests/test_latent_stage.py \
  -k "not autograd and not grad_mode" 2>&1 | tail -n 15 | tee $OUT/tests.log
