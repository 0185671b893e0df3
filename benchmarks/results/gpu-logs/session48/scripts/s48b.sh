#!/usr/bin/env bash
# session 48, command B (prepared in session 47 as s47a.sh, not run: no machine lent in 47 or 48): bench_decode.py's
# interleaved timing on Wan2.2 bf16 480x832 (exactness per round, peaks per decode); idle_gaps.py on the current
# code; interleaved_levers.py's energy column on its first GPU run, with a lever row that does not apply at
# 480x832 (its stage takes groups of 5): two identical variants, the noise floor of the comparison.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 120 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 7 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench_wan2.2.log | tail -n 7
timeout 90 python3 benchmarks/idle_gaps.py --model wan2.2 2>&1 | grep -v "^DEBUG" | tee $OUT/idle_gaps.log | tail -n 12
timeout 170 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 \
  --levers wanops-eager-five-frame-stage-groups 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_480.log | tail -n 8
