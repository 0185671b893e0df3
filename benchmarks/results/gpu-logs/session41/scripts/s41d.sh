#!/usr/bin/env bash
# session 41, command D: the first milliseconds of a warm Wan2.2 bf16 480x832 wanops decode, CPU ops and GPU kernels.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
timeout 200 python3 .gpu/s41_start_probe.py --model wan2.2 2>&1 | grep -v "^DEBUG" > $OUT/start22.log
head -c 9000 $OUT/start22.log
