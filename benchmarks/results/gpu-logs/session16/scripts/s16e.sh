#!/usr/bin/env bash
# session 16, command E: the committed code: bias_add_contiguous (launcher refactor) and channels_last_copy, every test on CUDA
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
git log --oneline | head -1
timeout 300 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_bias_add_contiguous.py tests/test_channels_last_copy.py > $OUT/t_ops.log 2>&1; tail -n 3 $OUT/t_ops.log
