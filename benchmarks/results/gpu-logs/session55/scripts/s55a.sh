#!/usr/bin/env bash
# session 55 C: session 54's compile_times.py at 9 frames, then the compiled columns of Wan2.2 bf16 480x832 with what
# the command has left. Ran with an earlier form of torch_wanops/ops/_inductor.py, which registered the ops' Inductor
# fallbacks from a Dynamo compile-start callback, and only when Inductor's lowering module was already imported
# (README, session 55).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader
start=$SECONDS
TORCH_LOGS=recompiles timeout 200 python3 benchmarks/results/gpu-logs/session54/scripts/compile_times.py \
  --model wan2.2 --frames 9 --decodes 3 2>&1 | tee $OUT/compile_times.log
left=$(( ${1:-580} - (SECONDS - start) ))
echo "bench limit: $left s"
timeout $left python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 \
  --compile-cases bf16:480x832 --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" \
  | tee $OUT/bench_compiled.log | tail -n 12
