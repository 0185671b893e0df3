#!/usr/bin/env bash
# session 11, command C: 720x1280x81 eager cells with the current defaults (bf16, fp32; fp16 with its lever row), both models
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
cell() { timeout $3 python3 benchmarks/bench_decode.py --models $1 --dtypes $2 --sizes 720x1280 --compile-cases $4 \
    --out $OUT/${2}_720_$1 > $OUT/${2}_720_$1.log 2>&1; }
cell wan2.1 bf16 100; cell wan2.2 bf16 100; cell wan2.1 fp32 150; cell wan2.2 fp32 150
cell wan2.1 fp16 90 --fp16-channels-last-convs
grep -h -B2 -A6 "^variant" $OUT/*.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
