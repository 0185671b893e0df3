#!/usr/bin/env bash
# session 43, command B: s43_dupnorm.py (fixed: not value-specialised) at Wan2.2's DupUp3D launches.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 200 python3 .gpu/s43_dupnorm.py 2>&1 | grep -v "^DEBUG" | tee $OUT/dupnorm.log
