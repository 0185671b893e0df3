#!/usr/bin/env bash
# session 17, command C: conv3d_chunked in fp32 (TF32, operands rounded to nearest even): CUDA tests, probe, decodes
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 120 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_conv3d_chunked.py > $OUT/t_op.log 2>&1; tail -n 8 $OUT/t_op.log
timeout 60 python3 benchmarks/probe_conv_order.py --dtypes fp32 > $OUT/probe_fp32.log 2>&1; cut -c1-150 $OUT/probe_fp32.log
timeout 240 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "chunked" > $OUT/t_decoder.log 2>&1; tail -n 8 $OUT/t_decoder.log
timeout 300 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes fp32 --sizes 480x832 --cudnn-convs \
      --out $OUT/bench_fp32 > $OUT/bench_fp32.log 2>&1
grep -h -B2 -A10 "^variant" $OUT/bench_fp32.log | head -40
