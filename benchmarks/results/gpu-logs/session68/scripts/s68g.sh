#!/usr/bin/env bash
# For the next GPU session (any card; an H200 for the H200 table): session 68's walk change (a residual block's input
# handed to norm1 as a temporary, Wan2.2's last up block keeping no copy of its input; a meta-device estimate of
# Wan2.2 bf16 480x832's peak 3.19 -> 3.00 GiB) on CUDA: the decoder's CUDA tests that decode the tiny and the real
# configs against stock, then what is alive at Wan2.2's peak, then the bf16 480x832 rows (time and peak).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short --durations=5"
timeout 200 $P -m cuda tests/test_decoder.py -k "real_configs_on_cuda and not float32" 2>&1 \
  | grep -v "^DEBUG" | tee $OUT/tests_decoder.log | tail -n 9
mkdir -p $OUT/memory $OUT/bench
timeout 120 python3 benchmarks/memory_decode.py --model wan2.2 --dtype bf16 --out $OUT/memory 2>&1 | grep -v "^DEBUG" \
  | tail -n 14
timeout 240 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 5 --out $OUT/bench 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench/bench.log | tail -n 12
