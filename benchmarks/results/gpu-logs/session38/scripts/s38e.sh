#!/usr/bin/env bash
# session 38, command E (the magic-number line split; .gpu/old.tar = a3a3be3, the 3-D grid with unsigned division):
# the fused norm's launches, new then old, and decodes alternating, one tar back.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o /tmp/r && tar xf .gpu/old.tar -C /tmp/o
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
norm() {  # norm TREE TAG
  (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 100 python3 benchmarks/decompose_norm_kernel.py --model wan2.2 \
    --no-channel-norm --no-tiles) > /tmp/r/norm_$2.log 2>&1
}
norm $PWD new; norm /tmp/o/old old
paste <(grep -v DEBUG /tmp/r/norm_old.log) <(grep -v DEBUG /tmp/r/norm_new.log | awk '{print $(NF-3), $(NF-1)}') | grep "kernel,\|plain" | cut -c1-150
bench() {  # bench TREE MODEL TAG
  (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 150 python3 benchmarks/bench_decode.py --models $2 --dtypes bf16 \
    --sizes 480x832 --compile-cases --repeat 7 --out /tmp/r/$3) > /tmp/r/$3.log 2>&1
  echo "== $3"; grep -v "^DEBUG" /tmp/r/$3.log | grep -A4 "^variant" | grep "eager"
}
for round in 1 2; do
  bench $PWD wan2.2 new22_$round; bench /tmp/o/old wan2.2 old22_$round
done
bench $PWD wan2.1 new21; bench /tmp/o/old wan2.1 old21
tar czf $OUT/s38e.tgz -C /tmp/r .
cat /tmp/r/meta.txt
