#!/usr/bin/env bash
# session 21, command B: recompile reasons of the compiled CUDA decode; Wan2.1 fp32 720x1280 profile (current code)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
TORCH_LOGS=recompiles timeout 200 python3 .gpu/s21diag.py > $OUT/diag.log 2>&1
grep -v "^DEBUG" $OUT/diag.log | grep "graphs\|diff\|triggered\|    - \|Error" | cut -c1-330 | head -40
timeout 200 python3 benchmarks/profile_decode.py --model wan2.1 --dtype fp32 --size 720x1280 --variants wanops-eager --out $OUT/prof > $OUT/prof.log 2>&1
head -n 30 $OUT/prof.log | cut -c1-200
