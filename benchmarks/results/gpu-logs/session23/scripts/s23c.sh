#!/usr/bin/env bash
# session 23, command C (run inline): Wan2.2 bf16 480x832 stock, eager, compiled side by side (B's bench ran out of time in wanops-compiled's first call)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 380 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; tail -n 2 $OUT/bench.log
