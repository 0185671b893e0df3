#!/usr/bin/env bash
# session 20, command B: compiled path without the ContextVar read; CUDA tests, diagnostics, Wan2.1 bf16 480x832 eager + compiled
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 100 python3 .gpu/s20diag.py > $OUT/diag.log 2>&1 &
timeout 230 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_compile.py -k "cuda" > $OUT/t_compile.log 2>&1 &
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "attention" > $OUT/t_decoder.log 2>&1 &
wait
grep -v "^DEBUG\|^W1\|^I1" $OUT/diag.log | tail -n 12; tail -n 6 $OUT/t_compile.log; grep -c WARNING $OUT/t_compile.log; tail -n 4 $OUT/t_decoder.log
timeout 300 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; tail -n 2 $OUT/bench.log
