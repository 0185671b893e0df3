#!/usr/bin/env bash
# session 39, command C (branch s38-aligned checked out; .gpu/old.tar and .gpu/layouts.tar as in s39b.sh): the norms at
# Wan2.2's launches (main, s38-layouts, s38-aligned) and decodes alternating with main, tarred.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o /tmp/r && tar xf .gpu/old.tar -C /tmp/o && tar xf .gpu/layouts.tar -C /tmp/o
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
unset PYTHONPATH
norm() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 100 python3 benchmarks/decompose_norm_kernel.py --model wan2.2 \
  --no-channel-norm --no-tiles) > /tmp/r/norm_$2.log 2>&1; }
norm /tmp/o/old main; norm /tmp/o/layouts layouts; norm $PWD aligned
paste <(grep -v DEBUG /tmp/r/norm_main.log) <(grep -v DEBUG /tmp/r/norm_layouts.log | awk '{print $(NF-3)}') \
  <(grep -v DEBUG /tmp/r/norm_aligned.log | awk '{print $(NF-3)}') | grep "kernel,\|plain" | cut -c1-150
bench() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 120 python3 benchmarks/bench_decode.py --models $2 --dtypes bf16 \
  --sizes 480x832 --compile-cases --repeat 7 --out /tmp/r/$3) > /tmp/r/$3.log 2>&1
  echo "== $3"; grep -v "^DEBUG" /tmp/r/$3.log | grep -A4 "^variant" | grep eager; }
bench $PWD wan2.2 branch22_1; bench /tmp/o/old wan2.2 main22_1; bench $PWD wan2.2 branch22_2; bench /tmp/o/old wan2.2 main22_2
bench $PWD wan2.1 branch21; bench /tmp/o/old wan2.1 main21
tar czf $OUT/s39c.tgz -C /tmp/r .
cat /tmp/r/meta.txt
