#!/usr/bin/env bash
# session 15, command B: cuDNN kernels and bits for the decoder's convs with channels-last, benchmark mode, zero-padded channels
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 .gpu/conv96.py 2>&1 | tee $OUT/conv96.log
