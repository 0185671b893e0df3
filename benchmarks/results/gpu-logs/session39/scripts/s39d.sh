#!/usr/bin/env bash
# session 39, command D (branch s39-split checked out): the norms at Wan2.2's launches on main, s39-split (merge first
# where transposing), its tree with merge_first = False (s38-aligned's tiles on main's order) and with merge_first
# only where transposing and not aligned; then one Wan2.2 decode each of s39-split and main. Tarred.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o /tmp/r && tar xf .gpu/old.tar -C /tmp/o
for v in never unaligned; do mkdir -p /tmp/o/$v && cp -r torch_wanops csrc_triton benchmarks /tmp/o/$v/; done
sed -i 's/^    merge_first = transposing$/    merge_first = False/' /tmp/o/never/torch_wanops/ops/cat_pad_5d.py
sed -i 's/^    merge_first = transposing$/    merge_first = transposing and not x_aligned/' /tmp/o/unaligned/torch_wanops/ops/cat_pad_5d.py
grep -n "merge_first =\|x_aligned =" /tmp/o/*/torch_wanops/ops/cat_pad_5d.py > /tmp/r/variants.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
unset PYTHONPATH
norm() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 100 python3 benchmarks/decompose_norm_kernel.py --model wan2.2 \
  --no-channel-norm --no-tiles) > /tmp/r/norm_$2.log 2>&1; }
norm /tmp/o/old main; norm $PWD split; norm /tmp/o/never never; norm /tmp/o/unaligned unaligned
paste <(grep -v DEBUG /tmp/r/norm_main.log) <(grep -v DEBUG /tmp/r/norm_split.log | awk '{print $(NF-3)}') \
  <(grep -v DEBUG /tmp/r/norm_never.log | awk '{print $(NF-3)}') <(grep -v DEBUG /tmp/r/norm_unaligned.log | awk '{print $(NF-3)}') \
  | grep "kernel,\|plain" | cut -c1-160
bench() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 120 python3 benchmarks/bench_decode.py --models $2 --dtypes bf16 \
  --sizes 480x832 --compile-cases --repeat 7 --out /tmp/r/$3) > /tmp/r/$3.log 2>&1
  echo "== $3"; grep -v "^DEBUG" /tmp/r/$3.log | grep -A4 "^variant" | grep eager; }
bench $PWD wan2.2 split22; bench /tmp/o/old wan2.2 main22
tar czf $OUT/s39d.tgz -C /tmp/r .
cat /tmp/r/meta.txt /tmp/r/variants.txt
