#!/usr/bin/env bash
# session 11, command D: bf16 720x1280x81 cells with the compiled variants, both models
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
for m in wan2.1 wan2.2; do
  timeout 285 python3 benchmarks/bench_decode.py --models $m --dtypes bf16 --sizes 720x1280 --compile-cases bf16:720x1280 \
    --out $OUT/bf16c_720_$m > $OUT/bf16c_720_$m.log 2>&1
done
grep -h -B2 -A6 "^variant" $OUT/*.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
