#!/usr/bin/env bash
# session 14, command D: the norm tiles (norm_tile) side by side with stock: bf16 and fp32 480x832, both models;
# then the decoder CUDA tests (real configs, switches) with what time is left
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
for dtype in bf16 fp32; do
  timeout 230 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes $dtype --sizes 480x832 --compile-cases \
      --out $OUT/bench_$dtype > $OUT/bench_$dtype.log 2>&1
  grep -h -A6 "^variant" $OUT/bench_$dtype.log | head -16
done
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; cd - > /dev/null
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k 'cuda and (non_default_switches or real_configs)' > $OUT/t_decoder.log 2>&1
tail -n 8 $OUT/t_decoder.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
