#!/usr/bin/env bash
# session 13, command F (run inline): Wan2.2 bf16 480x832 eager and compiled, side by side
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 330 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 \
    --out $OUT/compiled22 > $OUT/compiled22.log 2>&1
grep -h -A8 "^variant" $OUT/compiled22.log | head -12; grep -i -E "fall|graph break|error" $OUT/compiled22.log | head
