#!/usr/bin/env bash
# session 16, command B: channels_last_copy with its size threshold: op tests, op bench, Wan2.2 decodes with and without
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_channels_last_copy.py > $OUT/t_op.log 2>&1; tail -n 2 $OUT/t_op.log
for d in bf16 fp32; do timeout 60 python3 benchmarks/bench_ops.py --ops channels_last_copy --dtype $d --out $OUT/ops_$d > $OUT/ops_$d.log 2>&1; tail -n 7 $OUT/ops_$d.log | cut -d'|' -f2,4,5,7,8; done
timeout 330 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 fp32 --sizes 480x832 --aten-weight-copies --compile-cases \
      --out $OUT/bench_wan22 > $OUT/bench_wan22.log 2>&1
grep -h -A8 "^variant" $OUT/bench_wan22.log | head -24
