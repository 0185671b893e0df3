#!/usr/bin/env bash
# session 14, command B: shared-reciprocal division + norm tiles: exhaustive quotient check on CUDA,
# the fused norm kernel's launches and tiles, then bf16 480x832 side by side with the IEEE division row
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_shared_reciprocal.py > $OUT/t_quotient.log 2>&1
tail -n 5 $OUT/t_quotient.log
timeout 200 python3 benchmarks/decompose_norm_kernel.py > $OUT/decompose.log 2>&1
grep -v "tile (" $OUT/decompose.log | grep -v "BLOCK"
timeout 270 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
    --ieee-division --out $OUT/bench > $OUT/bench.log 2>&1
grep -h -B2 -A12 "^variant\|^| model" $OUT/bench.log | head -60; tail -n 5 $OUT/bench.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
