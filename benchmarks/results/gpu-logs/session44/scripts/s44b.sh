#!/usr/bin/env bash
# session 44, command B: the weight-copy CUDA tests (the fixed fp32 count); bench_decode.py's Wan2.2 and Wan2.1 bf16
# 480x832 cells with the first-come lever row (peaks side by side), medians of 7, into a copy of decode.json.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 120 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_channels_last_copy.py 2>&1 | grep -v "^DEBUG" > $OUT/tests.log; tail -n 1 $OUT/tests.log
cp benchmarks/results/decode.json $OUT/
timeout 420 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 7 --first-come-weight-copies --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 24
