#!/usr/bin/env bash
# session 39, command F (main at b3649af): bf16 720x1280 of both models, medians of 3, eager (the README's rows were
# sessions 26 and 31's code). Wan2.2 first; each writes its own out dir under $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
for m in wan2.2 wan2.1; do
  python3 benchmarks/bench_decode.py --models $m --dtypes bf16 --sizes 720x1280 --compile-cases --repeat 3 \
    --out $OUT/$m 2>&1 | grep -v "^DEBUG" > $OUT/$m.log
  grep -A4 "^variant" $OUT/$m.log
done
cat $OUT/meta.txt
