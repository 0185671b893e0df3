#!/usr/bin/env bash
# session 51, command B (right after A, same machine): the compile path's CUDA tests after session 50's tag.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 420 $P tests/test_compile.py -k cuda 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_compile.log | tail -n 1
