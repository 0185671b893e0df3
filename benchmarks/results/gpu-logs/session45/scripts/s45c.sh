#!/usr/bin/env bash
# session 45, command C: both variants' per-kernel profiles and wanops' idle gaps, Wan2.2 bf16 480x832.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
cat $OUT/meta.txt
timeout 150 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --size 480x832 --top 40 --out $OUT 2>&1 \
  | grep -v "^DEBUG" > $OUT/profile.log; grep -B2 -A30 "total CUDA" $OUT/profile.log | cut -c1-160 | grep -v "^ATen" | head -90; grep -A20 "kernels both ran" $OUT/profile.log | cut -c1-170
timeout 150 python3 benchmarks/idle_gaps.py --model wan2.2 --dtype bf16 --variants wanops-eager --repeats 5 --top 8 2>&1 \
  | grep -v "^DEBUG" > $OUT/idle_gaps.log; cut -c1-200 $OUT/idle_gaps.log | head -40
