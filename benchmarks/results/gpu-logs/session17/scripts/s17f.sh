#!/usr/bin/env bash
# session 17, command F: Wan2.1 fp32 720x1280 with the fp32 chunked convs
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 230 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 720x1280 --repeat 2 \
      --out $OUT/bench_fp32_720 > $OUT/bench_fp32_720.log 2>&1
grep -h -A8 "^variant" $OUT/bench_fp32_720.log | head -12
