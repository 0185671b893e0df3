#!/usr/bin/env bash
# session 28, command B: every Triton compile of a cold first decode (s28b.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 TRITON_CACHE_DIR=/tmp/triton-cache-b
rm -rf /tmp/triton-cache-b
timeout 200 python3 .gpu/s28b.py 2>&1 | grep -v "^DEBUG" > $OUT/compiles.log; grep "decode\|variants" $OUT/compiles.log
