#!/usr/bin/env bash
# session 42, command G (branch s42-epilogue-norm, final): the new op's property test, opcheck and gradients on CUDA
# and x_norm's CUDA tests; then bench_decode.py's Wan2.2 bf16 480x832 cell, eager. Logs straight to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 80 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_bias_add_contiguous_norm.py \
  -k "kernel_matches or opcheck or reference_path or gradients" 2>&1 | grep -v "^DEBUG" | tail -n 15 | tee $OUT/tests.log
timeout 120 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 5 --out $OUT/bench 2>&1 | grep -v "^DEBUG" | tail -n 12 | tee $OUT/bench.log
