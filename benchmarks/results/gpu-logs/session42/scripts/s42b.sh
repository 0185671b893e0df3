#!/usr/bin/env bash
# session 42, command B: conv2's bias epilogue that also writes the next norm (prototype timing).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 400 python3 .gpu/s42_epinorm.py 2>&1 | grep -v "^DEBUG" | tee $OUT/epinorm.log
