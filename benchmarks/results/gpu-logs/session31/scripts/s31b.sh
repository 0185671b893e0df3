#!/usr/bin/env bash
# session 31, command B: BATCHED_LATENT_STAGE on by default. The bf16 480x832 decodes side by side with stock and
# with the switch off (alone on the GPU), one profiled Wan2.2 decode, whether the
# frame batching pays past the latent stage (s31b_probe.py), then the CUDA tests of the decoder, the compile
# path and reliability with the new default, in parallel processes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt
timeout 150 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --unbatched-latent-stage --out $OUT/bench > $OUT/bench.log 2>&1; grep -A5 "^variant" $OUT/bench.log
timeout 80 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --variants wanops-eager --top 45 --out $OUT/prof > /dev/null 2>&1; head -40 $OUT/prof/*.txt
timeout 90 python3 .gpu/s31b_probe.py 2>&1 | grep -v "^DEBUG" > $OUT/probe.log; cat $OUT/probe.log
t=290
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_compile.py > /tmp/t_compile.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_reliability.py > /tmp/t_reliability.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 3 $f; done
