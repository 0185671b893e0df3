#!/usr/bin/env bash
# session 15, command E: conv3d_chunked side by side in fp16 480x832 (both models) and bf16 720x1280 (Wan2.1); the other decoder CUDA tests
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 170 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes fp16 --sizes 480x832 --cudnn-convs --compile-cases \
      --out $OUT/bench_fp16 > $OUT/bench_fp16.log 2>&1
grep -h -A8 "^variant" $OUT/bench_fp16.log | head -24
timeout 150 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 720x1280 --cudnn-convs --compile-cases \
      --out $OUT/bench_bf16_720 > $OUT/bench_bf16_720.log 2>&1
grep -h -A8 "^variant" $OUT/bench_bf16_720.log | head -12
timeout 220 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k 'cuda and not chunked_convs_on_cuda and not cudnn-convs and not (channels_last_convs_on_cuda and bfloat16)' > $OUT/t_decoder2.log 2>&1
tail -n 8 $OUT/t_decoder2.log
