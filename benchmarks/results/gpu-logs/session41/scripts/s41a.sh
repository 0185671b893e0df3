#!/usr/bin/env bash
# session 41, command A: whole-decode CUDA graph probe, Wan2.2 then Wan2.1 bf16 480x832x81.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/r && rm -f /tmp/r/*
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
timeout 280 python3 .gpu/s41_graph_probe.py --model wan2.2 2>&1 | grep -v "^DEBUG" | tee /tmp/r/graph22.log
timeout 250 python3 .gpu/s41_graph_probe.py --model wan2.1 --repeats 5 2>&1 | grep -v "^DEBUG" | tee /tmp/r/graph21.log
tar czf $OUT/s41a.tgz -C /tmp/r .
