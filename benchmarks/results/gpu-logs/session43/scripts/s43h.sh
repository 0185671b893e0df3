#!/usr/bin/env bash
# session 43, command H (the last of the session's device time): s43_block_fusion.py, the one-pass block fusion probe.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name --format=csv,noheader > $OUT/meta.txt 2>&1
timeout 150 python3 .gpu/s43_block_fusion.py 2>&1 | grep -v "^DEBUG" | tee $OUT/block_fusion.log
