#!/usr/bin/env bash
# session 35, command C: CPU cost per op call at the latent resolution; then the chunk-0-only decode's issue time.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; lscpu | grep -i "model name"; } > $OUT/meta.txt 2>&1
timeout 150 python3 benchmarks/cpu_launch_costs.py > $OUT/launch_costs.log 2>&1; grep -v "^DEBUG" $OUT/launch_costs.log
timeout 200 python3 benchmarks/cpu_profile_decode.py --model wan2.2 --frames 1 --variants wanops-eager --top 25 > $OUT/cpu_wan22_f1.log 2>&1; grep -v "^DEBUG" $OUT/cpu_wan22_f1.log | head -34
cat $OUT/meta.txt
