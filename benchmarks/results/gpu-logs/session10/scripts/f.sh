#!/usr/bin/env bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
CUDA_VISIBLE_DEVICES=1 timeout 200 python3 .gpu/ab.py profiler > $OUT/ab_profiler.log 2>&1 &
CUDA_VISIBLE_DEVICES=0 timeout 200 python3 .gpu/ab.py stub > $OUT/ab_stub.log 2>&1 &
wait
tail -n 6 $OUT/ab_*.log
