#!/usr/bin/env bash
# session 15, command D: conv3d_chunked on the GPU: op tests, side-by-side bench (bf16 480x832, both models, with and without), decoder tests
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 120 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_conv3d_chunked.py > $OUT/t_op.log 2>&1; tail -n 6 $OUT/t_op.log
timeout 200 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 --cudnn-convs --compile-cases \
      --out $OUT/bench_bf16 > $OUT/bench_bf16.log 2>&1
grep -h -A8 "^variant" $OUT/bench_bf16.log | head -24
timeout 230 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k 'chunked_convs_on_cuda or cudnn-convs or (channels_last_convs_on_cuda and bfloat16)' > $OUT/t_decoder.log 2>&1
tail -n 8 $OUT/t_decoder.log
