#!/usr/bin/env bash
# session 17, command B: TF32 chunk order at every fp32 geometry, rounding placements, tiles
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 200 python3 .gpu/tf32probe.py order 2>&1 | tee $OUT/tf32probe_order.log
timeout 100 python3 .gpu/tf32probe.py t96 2>&1 | tee $OUT/tf32probe_t96.log
timeout 100 python3 .gpu/tf32probe.py t192 2>&1 | tee $OUT/tf32probe_t192.log
