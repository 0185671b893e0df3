#!/usr/bin/env bash
# session 44, command C: the refused 720x1280 Conv2d probe; bench_decode.py's Wan2.2 bf16 720x1280 cell (medians of
# 3) on the current code; interleaved_levers.py on Wan2.2 480x832 with the first-come lever row again (7 rounds).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 100 python3 .gpu/s44_refused.py 2>&1 | tee $OUT/refused.log | tail -n 40
cp benchmarks/results/decode.json $OUT/
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 720x1280 --compile-cases \
  --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 8
timeout 250 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 \
  --levers wanops-eager-first-come-weight-copies 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_wan2.2.log | tail -n 9
