#!/usr/bin/env bash
# session 31, command C: with BATCHED_LATENT_STAGE on by default, the cells B did not run, side by side with stock
# and with the switch off: Wan2.2 bf16 720x1280 and Wan2.1 fp32 480x832; then which step after Wan2.2's latent stage
# leaves the one-frame bits on 5 frames per call (s31c_probe.py).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt
timeout 90 python3 .gpu/s31c_probe.py 2>&1 | grep -v "^DEBUG" > $OUT/probe.log; cat $OUT/probe.log
timeout 170 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 720x1280 --compile-cases --repeat 3 --unbatched-latent-stage --out $OUT/bench > $OUT/bench.log 2>&1
timeout 130 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 480x832 --compile-cases --repeat 3 --unbatched-latent-stage --out $OUT/bench >> $OUT/bench.log 2>&1
grep -B1 -A5 "^variant" $OUT/bench.log
