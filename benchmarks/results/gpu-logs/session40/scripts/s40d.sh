#!/usr/bin/env bash
# session 40, command D (main checked out, after whatever s40a-c merged): a fresh profile of both models' bf16 480x832
# wanops-eager decode (the committed ones are session 31/33's), into $OUT/profile.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
for m in wan2.2 wan2.1; do
  timeout 200 python3 benchmarks/profile_decode.py --model $m --dtype bf16 --variants wanops-eager --out $OUT/profile \
    2>&1 | grep -v "^DEBUG" | head -40
done
cat $OUT/meta.txt
