#!/usr/bin/env bash
# session 13, command D: the compiled path with RAW_CONV_OUTPUT_NORMS on CUDA (Wan2.1 bf16 480x832, side by side)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 480 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 \
    --out $OUT/compiled > $OUT/compiled.log 2>&1
grep -h -A8 "^variant" $OUT/compiled.log | head -12; grep -i -E "fall|graph break|error|warn" $OUT/compiled.log | head -10
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
