#!/usr/bin/env bash
# session 17, command D: the fp32 kernel's rounding guard and tiles
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 200 python3 .gpu/convtile.py 2>&1 | tee $OUT/convtile.log
