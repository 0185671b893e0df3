#!/usr/bin/env bash
# session 68 D: on an H200, the bf16 480x832 rows again with today's decoder (last in session 51, medians of 7), after
# session 68 B's compiled run timed eager wanops' Wan2.2 decode at 1.004 s against session 51's 0.975 s.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 420 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 \
  --repeat 7 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 14
