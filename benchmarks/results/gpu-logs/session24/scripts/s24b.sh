#!/usr/bin/env bash
# session 24, command B (branch compiled-caches-in-place): Wan2.2 bf16 480x832 stock, eager, compiled side by side; then the split-rule probe at the 384 -> 384 tail geometry alone
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 330 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep "median" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; tail -n 2 $OUT/bench.log
timeout 240 python3 benchmarks/probe_split_tiles.py --geometries 6 --min-length 12 > $OUT/probe.log 2>&1
grep -v "^DEBUG" $OUT/probe.log | tail -n 40
