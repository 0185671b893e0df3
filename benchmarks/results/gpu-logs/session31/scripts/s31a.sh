#!/usr/bin/env bash
# session 31, command A: decoder.BATCHED_LATENT_STAGE on the H200. Whole bf16 480x832x81 decodes against stock with
# the switch off and on (session 30's s30f.py), the side-by-side bench with the switch as a variant (alone on the
# GPU), then the switch's and the decoder's CUDA tests in parallel processes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
git log --oneline -1 > $OUT/commit.txt; git status --short >> $OUT/commit.txt
timeout 150 python3 benchmarks/results/gpu-logs/session30/scripts/s30f.py 2>&1 | grep -v "^DEBUG" > $OUT/batched_stage.log; cat $OUT/batched_stage.log
timeout 170 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --batched-latent-stage --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^ \|^DEBUG" $OUT/bench.log | tail -30
t=230
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > $OUT/t_latent_stage.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > $OUT/t_decoder_$g.log 2>&1 &
done
wait
for f in $OUT/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f | tail -n 8; done
