#!/usr/bin/env bash
# session 10, command A: fp32 lever kernel lists (GPU0), bf16 480x832 compiled cells with current defaults (both GPUs)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi -L > $OUT/gpus.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), torch.backends.cudnn.version())" >> $OUT/gpus.txt
bf16() { timeout 260 python3 benchmarks/bench_decode.py --models $1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 \
    --out $OUT/bf16_$1 > $OUT/bf16_$1.log 2>&1; }
(
  export CUDA_VISIBLE_DEVICES=0
  timeout 200 python3 benchmarks/diag_fp32_channels_last.py --per-call > $OUT/diag_per_call.log 2>&1
  bf16 wan2.1
) &
(
  export CUDA_VISIBLE_DEVICES=1
  bf16 wan2.2
  timeout 200 python3 benchmarks/memory_decode.py --dtype fp32 --out $OUT/mem_fp32 > $OUT/mem_fp32.log 2>&1
) &
wait
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; ls -R | head -40
