#!/usr/bin/env bash
# session 36, command D: where DECODE_WEIGHT_COPIES changes an fp32 tiny decode's bits (conv calls compared).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 200 python3 .gpu/s36_diag.py 2>&1 | grep -v "^DEBUG" | tee $OUT/diag.log | tail -40
