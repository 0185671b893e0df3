#!/usr/bin/env bash
# session 57: C, the command-line jobs on CUDA as a user runs them: `wanops check` (its autocast cases had never run
# on a GPU) and the README's main job, `wanops bench` with its CUDA defaults.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
timeout 300 python3 -m torch_wanops check 2>&1 | grep -v "^DEBUG" | tee $OUT/check.log | tail -n 8
timeout 250 python3 -m torch_wanops bench --json $OUT/bench.json 2>&1 | grep -v "^DEBUG" | tee $OUT/bench.log | tail -n 8
