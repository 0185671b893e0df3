#!/usr/bin/env bash
# session 18, command C: kernel profiles of fp32 decodes with TF32-grid conv inputs (the remaining ceiling)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
for model in wan2.1 wan2.2; do
  timeout 200 python3 benchmarks/profile_decode.py --model $model --dtype fp32 --variants wanops-eager --top 25 --out $OUT > $OUT/profile_$model.log 2>&1
  head -n 28 $OUT/profile_$model.log | cut -c1-150
done
