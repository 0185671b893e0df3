#!/usr/bin/env bash
# session 34, command A: channel_norm_kernel with ATen's block split. The kernel-order and raw-conv-output CUDA
# tests (1024-channel geometries now expected to be taken), then Wan2.2 bf16 480x832 side by side with stock
# and with BLOCK_SPLIT_NORMS off.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 240 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_rms_norm_cat_pad_5d.py -k "cuda and (kernel_is_atens or wide_raw or raw_conv_output or frame_slices)" > $OUT/tests.log 2>&1; grep -v "^DEBUG" $OUT/tests.log | tail -40
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --unsplit-kernel-norms --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A6 "^variant"
cat $OUT/meta.txt
