#!/usr/bin/env bash
# session 35, command B: the CPU's cost of issuing a short Wan2.2 bf16 480x832 decode, and where it goes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 250 python3 benchmarks/cpu_profile_decode.py --model wan2.2 --frames 5 > $OUT/cpu_wan22_f5.log 2>&1; grep -v "^DEBUG" $OUT/cpu_wan22_f5.log | head -120
cat $OUT/meta.txt
