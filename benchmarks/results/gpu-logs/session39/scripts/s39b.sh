#!/usr/bin/env bash
# session 39, command B (branch s38-aligned checked out, which holds s38-layouts; .gpu/old.tar = `git archive main
# --prefix=old/ torch_wanops csrc_triton benchmarks tests`, .gpu/layouts.tar the same of s38-layouts with
# --prefix=layouts/): the transposing norm's one layout conversion and column-aligned tiles. CUDA tests of cat_pad_5d,
# upsample_nearest_2x, indexing, bias_add_contiguous, rms_norm_cat_pad_5d (six shards), the decoder's lists; the
# timing is s39c.sh. Logs tarred ($OUT returns few files).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o /tmp/r && tar xf .gpu/old.tar -C /tmp/o && tar xf .gpu/layouts.tar -C /tmp/o
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
for f in /tmp/t_*.log; do echo "== $f"; tail -n 2 $f; done
tar czf $OUT/s39b.tgz -C /tmp/r .
cat /tmp/r/meta.txt
