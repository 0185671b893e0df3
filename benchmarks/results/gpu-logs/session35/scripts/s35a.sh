#!/usr/bin/env bash
# session 35, command A: where a Wan2.2 bf16 480x832 decode leaves the GPU idle, stock and wanops.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 280 python3 benchmarks/idle_gaps.py --model wan2.2 --variants wanops-eager diffusers-eager > $OUT/idle_wan22.log 2>&1; grep -v "^DEBUG" $OUT/idle_wan22.log | tail -45
cat $OUT/meta.txt
