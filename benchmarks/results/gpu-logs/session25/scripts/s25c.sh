#!/usr/bin/env bash
# session 25, command C: the norm kernel's CUDA tests alone (B cut them at 200 s beside the compile tests),
# then Wan2.1 and Wan2.2 bf16 480x832 side by side, eager, on the flat grid and the norm's skipped lines.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 230 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_rms_norm_cat_pad_5d.py -k cuda > $OUT/t_rms_norm_cat_pad_5d.log 2>&1
grep -v "^DEBUG" $OUT/t_rms_norm_cat_pad_5d.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
timeout 250 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases --out $OUT/bench480 > $OUT/bench480.log 2>&1
grep -A6 "^variant" $OUT/bench480.log; tail -n 3 $OUT/bench480.log
