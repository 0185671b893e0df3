#!/usr/bin/env bash
# session 33, command B: the current code (4f7ef0f) side by side with stock at bf16 480x832 and one profiled
# Wan2.2 decode: where its kernel time goes now, for the ceiling table.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; which ncu nsys; } > $OUT/meta.txt 2>&1
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A5 "^variant"
timeout 100 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --variants wanops-eager --top 70 --out $OUT/prof > /dev/null 2>&1; head -45 $OUT/prof/*.txt
cat $OUT/meta.txt
