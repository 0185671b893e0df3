#!/usr/bin/env bash
# session 57: B, the compiled columns of Wan2.1 bf16 480x832 on the H100 table (Wan2.2's came in session 56's B).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader
timeout 560 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 \
  --compile-cases bf16:480x832 --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" \
  | tee $OUT/bench_compiled.log | tail -n 8
