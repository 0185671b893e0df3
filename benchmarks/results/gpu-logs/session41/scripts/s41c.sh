#!/usr/bin/env bash
# session 41, command C: benchmarks/graph_replay.py (the probe of A and B as a script), Wan2.2 then Wan2.1 bf16 480x832x81.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 270 python3 benchmarks/graph_replay.py --model wan2.2 2>&1 | grep -v "^DEBUG" | tee $OUT/graph_replay_wan2.2.log
timeout 250 python3 benchmarks/graph_replay.py --model wan2.1 --repeats 3 2>&1 | grep -v "^DEBUG" | tee $OUT/graph_replay_wan2.1.log
