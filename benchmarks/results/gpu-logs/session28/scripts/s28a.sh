#!/usr/bin/env bash
# session 28, command A: two decodes on two streams against one after the other (s28a.py), then the first-decode
# times prepared in session 27 (s27f.sh).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 150 python3 .gpu/s28a.py wan2.2 2>&1 | grep -v "^DEBUG" > $OUT/streams.log; tail -8 $OUT/streams.log
bash .gpu/s27f.sh
