#!/usr/bin/env bash
# session 36, command B: Wan2.2 and Wan2.1 bf16 480x832 side by side with the frame loop's ops dispatched through the
# autograd layer again (the switch off); then Wan2.2's idle time on the GPU, both ways.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 330 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --autograd-dispatch --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A6 "^variant"
timeout 150 python3 benchmarks/idle_gaps.py --model wan2.2 --variants wanops-eager wanops-eager-autograd-dispatch --repeats 3 --top 3 2>&1 | grep -v "^DEBUG" > $OUT/idle_wan22.log; cat $OUT/idle_wan22.log
cat $OUT/meta.txt
