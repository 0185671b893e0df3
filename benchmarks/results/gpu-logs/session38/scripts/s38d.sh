#!/usr/bin/env bash
# session 38, command D (the magic-number line split, uncommitted on c80744b's successors): its CUDA tests:
# test_indexing, -m cuda of cat_pad_5d, bias_add_contiguous, upsample_nearest_2x, rms_norm_cat_pad_5d (six shards),
# the decoder's four lists; in parallel.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
t=400
for f in indexing cat_pad_5d bias_add_contiguous upsample_nearest_2x; do
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_$f.py > /tmp/t_$f.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_indexing.py > /tmp/t_indexing_all.log 2>&1 &
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
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 2 $f; done
cat $OUT/meta.txt
