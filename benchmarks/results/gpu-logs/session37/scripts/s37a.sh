#!/usr/bin/env bash
# session 37, command A: the PTX norm arithmetic's CUDA tests: norm_ptx (every 16-bit dividend), every CUDA test of
# rms_norm_cat_pad_5d (six shards), the decoder's four CUDA lists, the two new switches off in whole decodes,
# reliability; in parallel.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
t=420
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_norm_ptx.py > /tmp/t_norm_ptx.log 2>&1 &
python3 -m pytest --collect-only -q -p no:cacheprovider -m cuda tests/test_rms_norm_cat_pad_5d.py 2>/dev/null | grep "::" > /tmp/rms_ids.txt
wc -l /tmp/rms_ids.txt
split -n r/6 /tmp/rms_ids.txt /tmp/rms_shard_
for s in /tmp/rms_shard_*; do
  mapfile -t ids < $s
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_rms_${s##*_}.log 2>&1 &
done
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k "ieee-division-norms or loaded-silu-table" tests/test_decoder.py > /tmp/t_switches.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_reliability.py > /tmp/t_reliability.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 2 $f; done
grep -h -B2 -A25 "^____\|Error" /tmp/t_norm_ptx.log | head -60
cat $OUT/meta.txt
