#!/usr/bin/env bash
# session 35, command F: the refactored probes on the final tree: Wan2.2 bf16 480x832's idle time and the first
# chunk's CPU issue time with session 35's levers.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 100 python3 benchmarks/idle_gaps.py --model wan2.2 --variants wanops-eager --repeats 3 --top 5 2>&1 | grep -v "^DEBUG" > $OUT/idle_wan22.log; cat $OUT/idle_wan22.log
timeout 60 python3 benchmarks/cpu_profile_decode.py --model wan2.2 --frames 1 --variants wanops-eager --top 8 2>&1 | grep -v "^DEBUG" > $OUT/cpu_wan22_f1.log; head -4 $OUT/cpu_wan22_f1.log
cat $OUT/meta.txt
