#!/usr/bin/env bash
# session 11, command B: fp16 through the conv-layout lever, side by side with stock, both models, 480x832x81
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
for m in wan2.1 wan2.2; do
  timeout 280 python3 benchmarks/bench_decode.py --models $m --dtypes fp16 --sizes 480x832 --compile-cases \
    --fp16-channels-last-convs --out $OUT/fp16_$m > $OUT/fp16_$m.log 2>&1
done
grep -h -B2 -A6 "^variant" $OUT/*.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
