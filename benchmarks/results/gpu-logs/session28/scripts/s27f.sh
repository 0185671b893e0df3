#!/usr/bin/env bash
# session 27, command F: first-decode times on a fresh machine, each bench in its own process: Wan2.2 bf16
# 480x832 with an empty Triton cache, again with the cache the first run filled, then Wan2.1.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/triton-cache
rm -rf /tmp/triton-cache
for run in wan2.2-cold wan2.2-warm wan2.1-warm; do
  timeout 100 python3 benchmarks/bench_decode.py --models ${run%-*} --dtypes bf16 --sizes 480x832 --compile-cases --repeat 1 --out /tmp/bd-$run > $OUT/first_$run.log 2>&1
  echo "$run"; grep -A3 "^variant" $OUT/first_$run.log | tail -2
done
