#!/usr/bin/env bash
# session 32, command C: B's tests refused every stage geometry of test_batched_latent_stage_on_cuda (real configs at
# 240x416, tiny configs) while the 480x832 bench ran faster with the longer stage. Which compared tensors differ, per
# model, size and stage length (s32c_probe.py), beside the latent stage's CUDA tests (the CPU now runs stock's loop,
# tiny stages are below LATENT_STAGE_MIN_ELEMENTS); then the bf16 480x832 decodes side by side with the longer stage
# off (alone on the GPU).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt
timeout 200 python3 -m pytest -q -s -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout 200 python3 .gpu/s32c_probe.py 2>&1 | grep -v "^DEBUG" > $OUT/probe_c.log; cat $OUT/probe_c.log
wait
grep -v "^DEBUG" /tmp/t_latent_stage.log > $OUT/t_latent_stage.log; grep "verdicts" $OUT/t_latent_stage.log; tail -n 3 $OUT/t_latent_stage.log
timeout 230 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --stage-to-first-up-block --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep "median\|^variant\|^ *wanops\|^ *diffusers" | grep -v "run \|first call"
