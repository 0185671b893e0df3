#!/usr/bin/env bash
# session 66 C: the warm card after B. The README's main job as a user on a CUDA machine runs it (its embedded
# default: full-size Wan2.1, 480x832x81, bf16, seeded weights).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
timeout 400 python3 -m torch_wanops bench 2>&1 | grep -v "^DEBUG" | tee $OUT/bench.log | tail -n 15
