#!/usr/bin/env bash
# session 16, command A: channels_last_copy on the GPU: op tests, tile sweep, op bench, decoder tests with it
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 90 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_channels_last_copy.py > $OUT/t_op.log 2>&1; tail -n 4 $OUT/t_op.log
timeout 150 python3 .gpu/sweep_clc.py > $OUT/sweep_clc.log 2>&1; cat $OUT/sweep_clc.log | cut -c1-250
timeout 60 python3 benchmarks/bench_ops.py --ops channels_last_copy --dtype bf16 --out $OUT/ops_bf16 > $OUT/ops_bf16.log 2>&1; tail -n 8 $OUT/ops_bf16.log
timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k 'aten-weight-copies or (channels_last_convs_on_cuda and bfloat16)' > $OUT/t_decoder.log 2>&1
grep -c PASSED $OUT/t_decoder.log; tail -n 4 $OUT/t_decoder.log
