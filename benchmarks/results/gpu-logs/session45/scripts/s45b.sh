#!/usr/bin/env bash
# session 45, command B: the convs of wanops' decode replayed alone (back to back; one at a time after 30 ms idle),
# with stock's and wanops' decodes, SM clock and power sampled throughout.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
cat $OUT/meta.txt
run() { timeout 170 python3 benchmarks/conv_replay.py "$@" 2>&1 | grep -v "^DEBUG" > $OUT/replay_$2_$4.log; cat $OUT/replay_$2_$4.log; }
run --model wan2.2 --size 480x832 --rounds 3
run --model wan2.2 --size 720x1280 --rounds 2
run --model wan2.1 --size 480x832 --rounds 2
