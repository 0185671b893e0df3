#!/usr/bin/env bash
# session 51, prepared, not run: the other ops' CUDA lists, then the compiled columns of Wan2.2 bf16 480x832 (s51a's
# C run of 5 rounds was cut during compiled wanops' first calls at 560 s; 3 rounds here). Run as two commands if the
# first part is slow: the bench alone needs most of a command's 600 s.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
if [ "${1:-tests}" = tests ]; then
  timeout 300 $P -m cuda tests/test_cat_pad_5d.py tests/test_wan_rms_norm.py 2>&1 | grep -v "^DEBUG" \
    | tee $OUT/tests_ops.log | tail -n 1
else
  timeout 580 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 \
    --compile-cases bf16:480x832 --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" \
    | tee $OUT/bench_compiled.log | tail -n 8
fi
