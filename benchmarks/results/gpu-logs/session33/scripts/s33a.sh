#!/usr/bin/env bash
# session 33, command A: cuDNN's benchmark mode against the heuristics per decoder conv geometry (alone on the
# GPU), then the CUDA tests session 32 left unrun on 4f7ef0f: the decoder's lists 1-3 (and 0) and the latent stage.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt
timeout 220 python3 .gpu/s33a_bench_mode.py 0 > $OUT/bench_mode.log 2>&1; grep -v "^   " $OUT/bench_mode.log
t=330
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -s -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; grep "verdicts" $f | head -5; tail -n 3 $f; done
