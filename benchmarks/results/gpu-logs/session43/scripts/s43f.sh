#!/usr/bin/env bash
# session 43, command F (final code): bench_decode.py's Wan2.2 and Wan2.1 bf16 480x832 cells, eager, medians of 7,
# accumulated into a copy of results/decode.json under $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
cp benchmarks/results/decode.json $OUT/
timeout 400 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 7 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 20
