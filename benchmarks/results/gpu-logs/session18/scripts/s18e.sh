#!/usr/bin/env bash
# session 18, command E: Wan2.2 fp32 720x1280 on the final code
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes fp32 --sizes 720x1280 --repeat 2 --compile-cases --out $OUT/bench_fp32_720 > $OUT/bench_fp32_720.log 2>&1
