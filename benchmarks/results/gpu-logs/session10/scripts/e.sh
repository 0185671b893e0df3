#!/usr/bin/env bash
# session 10, command E: fp32 wan2.2 compiled cell (GPU1); bf16 480x832 eager repeat, both models (GPU0)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
CUDA_VISIBLE_DEVICES=0 timeout 300 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 \
    --compile-cases --out $OUT/bf16 > $OUT/bf16.log 2>&1 &
CUDA_VISIBLE_DEVICES=1 timeout 400 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes fp32 --sizes 480x832 \
    --compile-cases fp32:480x832 --out $OUT/fp32c_wan2.2 > $OUT/fp32c_wan2.2.log 2>&1 &
wait
grep -h -A6 "^variant" $OUT/*.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; ls
