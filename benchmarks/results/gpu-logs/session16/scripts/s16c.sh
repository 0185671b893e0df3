#!/usr/bin/env bash
# session 16, command C: the Wan2.2 copy-use test, every CUDA decoder test, the conv-order probe (first run)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 80 python3 -m pytest -v -p no:cacheprovider -rfE --tb=short tests/test_channels_last_copy.py -k wan22 > $OUT/t_op_wan22.log 2>&1; tail -n 3 $OUT/t_op_wan22.log
timeout 75 python3 benchmarks/probe_conv_order.py > $OUT/probe_conv_order.log 2>&1; tail -n 20 $OUT/probe_conv_order.log | cut -c1-220
timeout 330 python3 -m pytest -v -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -m cuda > $OUT/t_decoder.log 2>&1
grep -c PASSED $OUT/t_decoder.log; grep -E "FAILED|ERROR" $OUT/t_decoder.log | head; tail -n 2 $OUT/t_decoder.log
