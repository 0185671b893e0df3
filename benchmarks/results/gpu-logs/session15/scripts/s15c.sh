#!/usr/bin/env bash
# session 15, command C: can a Triton implicit-GEMM conv reproduce cuDNN's 96-channel sm80 kernel's bits?
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 280 python3 .gpu/convfast.py full 2>&1 | tee $OUT/convfast.log
