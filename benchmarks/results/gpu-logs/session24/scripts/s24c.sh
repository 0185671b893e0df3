#!/usr/bin/env bash
# session 24, command C: the fp32 compiled CUDA difference bisected by Dynamo backend (tiny configs); TF32 on and off
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 250 python3 .gpu/s24diag.py wan2.1-tiny wan2.2-tiny 2>&1 | grep -v "^DEBUG\|Warning\|warn" | tee $OUT/diag.log
