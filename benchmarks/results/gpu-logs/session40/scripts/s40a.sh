#!/usr/bin/env bash
# session 40, command A (branch s39-evict checked out; .gpu/old.tar = `git archive main --prefix=old/ torch_wanops
# csrc_triton benchmarks tests` at main's final session-39 commit): the norms at Wan2.2's launches on main, the branch
# and the branch with only the table's hint; decodes alternating with main; the CUDA tests of cat_pad_5d and the
# norm (cache hints change no value, but the kernel changed). Tarred.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o/table /tmp/r && tar xf .gpu/old.tar -C /tmp/o && cp -r torch_wanops csrc_triton benchmarks /tmp/o/table/
sed -i 's/, eviction_policy="evict_first")$/)/' /tmp/o/table/csrc_triton/cat_pad_5d.py
grep -n "eviction" /tmp/o/table/csrc_triton/cat_pad_5d.py csrc_triton/cat_pad_5d.py > /tmp/r/variants.txt
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
norm() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 100 python3 benchmarks/decompose_norm_kernel.py --model wan2.2 \
  --no-channel-norm --no-tiles) > /tmp/r/norm_$2.log 2>&1; }
norm /tmp/o/old main; norm $PWD evict; norm /tmp/o/table table; norm /tmp/o/old main_again
paste <(grep -v DEBUG /tmp/r/norm_main.log) <(grep -v DEBUG /tmp/r/norm_evict.log | awk '{print $(NF-3)}') \
  <(grep -v DEBUG /tmp/r/norm_table.log | awk '{print $(NF-3)}') <(grep -v DEBUG /tmp/r/norm_main_again.log | awk '{print $(NF-3)}') \
  | grep "kernel,\|plain" | cut -c1-160
bench() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 120 python3 benchmarks/bench_decode.py --models $2 --dtypes bf16 \
  --sizes 480x832 --compile-cases --repeat 7 --out /tmp/r/$3) > /tmp/r/$3.log 2>&1
  echo "== $3"; grep -v "^DEBUG" /tmp/r/$3.log | grep -A4 "^variant" | grep eager; }
bench $PWD wan2.2 evict22_1; bench /tmp/o/old wan2.2 main22_1; bench $PWD wan2.2 evict22_2; bench /tmp/o/old wan2.2 main22_2
export PYTHONPATH=/tmp/site:$PWD
timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_cat_pad_5d.py > /tmp/t_cat_pad_5d.log 2>&1 &
python3 -m pytest --collect-only -q -p no:cacheprovider -m cuda tests/test_rms_norm_cat_pad_5d.py 2>/dev/null | grep "::" > /tmp/rms_ids.txt
split -n r/6 /tmp/rms_ids.txt /tmp/rms_shard_
for s in /tmp/rms_shard_*; do
  mapfile -t ids < $s
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_rms_${s##*_}.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > /tmp/r/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
tar czf $OUT/s40a.tgz -C /tmp/r .
cat /tmp/r/meta.txt
