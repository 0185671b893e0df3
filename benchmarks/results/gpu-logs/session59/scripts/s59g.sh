#!/usr/bin/env bash
# session 59 G: a parallel precompile's gain on a cold first decode (s59g_precompile.py), each phase in a new process
# with an empty Triton cache of its own.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
nproc | tee -a $OUT/gpu.txt
S=benchmarks/results/gpu-logs/session59/scripts/s59g_precompile.py
rm -rf /tmp/tcg1 /tmp/tcg2
TRITON_CACHE_DIR=/tmp/tcg1 timeout 150 python3 $S record $OUT/specialisations.json 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/record.log
TRITON_CACHE_DIR=/tmp/tcg2 timeout 200 python3 $S replay $OUT/specialisations.json 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/replay.log
