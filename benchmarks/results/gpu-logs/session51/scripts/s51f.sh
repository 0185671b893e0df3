#!/usr/bin/env bash
# session 51, branch s51-ptx-norm, on the device time left (~3 min): the division's exhaustive CUDA test, then a
# short interleaved_levers run (3 rounds) with the division switched off as the lever row. A first look only:
# s51e.sh is the full measurement.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
timeout 40 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_norm_ptx.py 2>&1 \
  | grep -v "^DEBUG" | tee $OUT/tests_norm_ptx.log | tail -n 1
timeout 140 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 3 \
  --levers wanops-eager-ieee-division-norms 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved.log | tail -n 10
