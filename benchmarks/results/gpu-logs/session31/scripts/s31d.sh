#!/usr/bin/env bash
# session 31, command D: the batched frame loop's lifetimes tightened (no up block input kept for a plain up block,
# each frame's stage tensors popped, conv_in's output handed on as a temporary): whole bf16 480x832x81 decodes of
# both models against stock with the switch off and on (s30f.py; its times are not clean: the tests run beside it),
# and tests/test_latent_stage.py -k cuda, in parallel.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout 200 python3 benchmarks/results/gpu-logs/session30/scripts/s30f.py 2>&1 | grep -v "^DEBUG" > $OUT/batched_stage.log; cat $OUT/batched_stage.log
wait
grep -v "^DEBUG" /tmp/t_latent_stage.log > $OUT/t_latent_stage.log; tail -n 5 $OUT/t_latent_stage.log
