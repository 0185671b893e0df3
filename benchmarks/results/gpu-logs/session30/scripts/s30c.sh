#!/usr/bin/env bash
# session 30, command C: benchmarks/probe_frame_batching.py on both models (bf16 480x832), then s30b.py.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
for model in wan2.2 wan2.1; do
  timeout 200 python3 benchmarks/probe_frame_batching.py --model $model --dtype bf16 --size 480x832 --frames 81 \
    --groups 2 3 5 7 21 2>&1 | grep -v "^DEBUG" > $OUT/frame_batching_$model.log; cat $OUT/frame_batching_$model.log
done
timeout 100 python3 .gpu/s30b.py 2>&1 | grep -v "^DEBUG" > $OUT/attention_steps.log; cat $OUT/attention_steps.log
