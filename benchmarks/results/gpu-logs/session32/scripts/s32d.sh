#!/usr/bin/env bash
# session 32, command D: a refused stage through the second up block falls back to the one through the first
# (_latent_stage_frames tries both), the loop CUDA's alone. The latent stage's CUDA tests (verdicts printed) and the
# first of the decoder's four CUDA test lists, in parallel (the session's device time allowed no more).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt
t=170
mapfile -t ids < .gpu/s30_dec0.txt
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_0.log 2>&1 &
timeout $t python3 -m pytest -q -s -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; grep "verdicts" $f; tail -n 3 $f; done
