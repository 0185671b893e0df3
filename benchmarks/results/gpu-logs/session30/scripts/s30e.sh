#!/usr/bin/env bash
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 240 python3 .gpu/s30e.py 2>&1 | grep -v "^DEBUG" > $OUT/stage_steps.log; cat $OUT/stage_steps.log
