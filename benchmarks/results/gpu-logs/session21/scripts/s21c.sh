#!/usr/bin/env bash
# session 21, command C: compiled chunks after an eager one run eagerly (two graphs); CUDA compile tests; Wan2.1 bf16 480x832 eager + compiled side by side
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short -s tests/test_compile.py -k "cuda" > $OUT/t_compile.log 2>&1
grep -v "^DEBUG" $OUT/t_compile.log | grep -i "diff\|passed\|failed\|^E " | tail -n 14
timeout 330 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; grep -i "max\|diff\|psnr" $OUT/bench.log | head; tail -n 2 $OUT/bench.log
