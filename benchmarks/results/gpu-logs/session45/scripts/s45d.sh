#!/usr/bin/env bash
# session 45, command D (run twice: the op rows, then the per-step counts): the 45x80 latent stage probe.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 200 python3 benchmarks/probe_frame_batching.py --model wan2.2 --dtype bf16 --size 720x1280 --groups 2 3 2>&1 \
  | grep -v "^DEBUG" > $OUT/probe.log; cat $OUT/probe.log
