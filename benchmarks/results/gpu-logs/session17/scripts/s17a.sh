#!/usr/bin/env bash
# session 17, command A: fp32 (TF32) convs in cuDNN's chunk order? order probe, then tiles
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv | tee $OUT/gpu.txt
timeout 200 python3 .gpu/tf32probe.py order 2>&1 | tee $OUT/tf32probe_order.log
for r in 0 1 2; do timeout 60 python3 .gpu/tf32probe.py $r 2>&1 | tee $OUT/tf32probe_tiles_$r.log; done
