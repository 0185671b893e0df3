#!/usr/bin/env bash
# session 20, command E: compiled tiny decodes on CUDA, their difference from stock
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 130 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=line tests/test_compile.py -k "cuda" > $OUT/t_compile.log 2>&1
grep -E "max \\|diff\\||passed|failed|^E  " $OUT/t_compile.log | cut -c1-200 | head -20
