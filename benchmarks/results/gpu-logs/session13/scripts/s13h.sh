#!/usr/bin/env bash
# session 13, command H (run inline): Wan2.1 bf16 720x1280 eager with the lever row (the old path)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 185 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 720x1280 --compile-cases \
    --biased-conv-outputs --out $OUT/bf16_720 > $OUT/bf16_720.log 2>&1
