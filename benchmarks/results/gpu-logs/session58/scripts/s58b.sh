#!/usr/bin/env bash
# session 58 B: on an H200, session 51's `s51d.sh bench` (the compiled columns of Wan2.2 bf16 480x832); on any other
# card, `-m cuda` of test_rms_norm_cat_pad_5d.py (its first CUDA run since the ops' Inductor fallbacks are registered
# at import, session 55; ~15 minutes in one process in session 53), in three processes side by side.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
git rev-parse --short HEAD 2>/dev/null | tee -a $OUT/gpu.txt
if [[ "$gpu" == *H200* ]]; then
  bash benchmarks/results/gpu-logs/session51/scripts/s51d.sh bench
  exit
fi
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
$P --collect-only -m cuda tests/test_rms_norm_cat_pad_5d.py | grep "::" > /tmp/ids
wc -l < /tmp/ids | tee $OUT/collected.txt
for shard in 0 1 2; do
  awk -v s=$shard 'NR % 3 == s' /tmp/ids > /tmp/ids$shard
  mapfile -t ids < /tmp/ids$shard  # node ids hold spaces (shape parameters)
  timeout 540 $P "${ids[@]}" 2>&1 | grep -v "^DEBUG" > $OUT/rms_norm_cat_pad_5d_$shard.log &
done
wait
tail -n 2 $OUT/rms_norm_cat_pad_5d_*.log
