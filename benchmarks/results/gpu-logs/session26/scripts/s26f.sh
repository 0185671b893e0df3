#!/usr/bin/env bash
# session 26, command F: where Wan2.2 bf16 480x832's eager wanops decode spends its GPU time now (the
# ceiling of issue 6's Wan2.2 bf16 target), one profiled decode.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 200 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --variants wanops-eager --top 45 --out $OUT > $OUT/profile.log 2>&1
grep -v "^DEBUG" $OUT/profile.log | head -n 60
