#!/usr/bin/env bash
# session 37, command B: norm_ptx's CUDA tests again (signed zeros kept by the test kernel); the fused norm at Wan2.2's
# launches with and without the PTX arithmetic (same bits checked); Wan2.2 and Wan2.1 bf16 480x832 side by side with
# each switch off.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_norm_ptx.py > $OUT/tests_norm_ptx.log 2>&1; tail -n 3 $OUT/tests_norm_ptx.log
timeout 100 python3 benchmarks/decompose_norm_kernel.py --model wan2.2 --no-channel-norm --no-tiles > $OUT/norm_wan22.log 2>&1; cat $OUT/norm_wan22.log | grep -v "^DEBUG"
timeout 400 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --ieee-division-norms --loaded-silu-table --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A8 "^variant"
cat $OUT/meta.txt
