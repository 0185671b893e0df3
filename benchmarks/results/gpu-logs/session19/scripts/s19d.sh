#!/usr/bin/env bash
# session 19, command D: fp32 decodes with the tail split and the wider tile: Wan2.2 480x832, Wan2.1 720x1280
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes fp32 --sizes 480x832 --compile-cases --out $OUT/bench22 > $OUT/bench22.log 2>&1
grep -A8 "^variant" $OUT/bench22.log
timeout 280 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 720x1280 --compile-cases --out $OUT/bench720 > $OUT/bench720.log 2>&1
grep -A10 "^variant" $OUT/bench720.log; tail -n 3 $OUT/bench720.log
