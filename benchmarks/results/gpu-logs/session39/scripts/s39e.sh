#!/usr/bin/env bash
# session 39, command E (branch s39-split): its CUDA tests (as s39b.sh), then decodes alternating with main. Tarred.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o /tmp/r && tar xf .gpu/old.tar -C /tmp/o
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
export PYTHONPATH=/tmp/site:$PWD
t=330
for f in cat_pad_5d upsample_nearest_2x indexing bias_add_contiguous; do
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_$f.py > /tmp/t_$f.log 2>&1 &
done
python3 -m pytest --collect-only -q -p no:cacheprovider -m cuda tests/test_rms_norm_cat_pad_5d.py 2>/dev/null | grep "::" > /tmp/rms_ids.txt
split -n r/6 /tmp/rms_ids.txt /tmp/rms_shard_
for s in /tmp/rms_shard_*; do
  mapfile -t ids < $s
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_rms_${s##*_}.log 2>&1 &
done
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > /tmp/r/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
unset PYTHONPATH
bench() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 120 python3 benchmarks/bench_decode.py --models $2 --dtypes bf16 \
  --sizes 480x832 --compile-cases --repeat 7 --out /tmp/r/$3) > /tmp/r/$3.log 2>&1
  echo "== $3"; grep -v "^DEBUG" /tmp/r/$3.log | grep -A4 "^variant" | grep eager; }
bench $PWD wan2.2 split22_1; bench /tmp/o/old wan2.2 main22_1; bench $PWD wan2.2 split22_2; bench /tmp/o/old wan2.2 main22_2
bench $PWD wan2.1 split21; bench /tmp/o/old wan2.1 main21
tar czf $OUT/s39e.tgz -C /tmp/r .
cat /tmp/r/meta.txt
