#!/usr/bin/env bash
# session 13, command C: RAW_CONV_OUTPUT_NORMS in fp32 and fp16 (480x832 side by side, lever row = the old path);
# Wan2.2 bf16 profile with it on
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 90 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --variants wanops-eager --out $OUT > $OUT/profile_wan2.2_bf16.log 2>&1
for dtype in fp32 fp16; do
  timeout 200 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes $dtype --sizes 480x832 --compile-cases \
      --biased-conv-outputs --out $OUT/bench_$dtype > $OUT/bench_$dtype.log 2>&1
  grep -h -A6 "^variant" $OUT/bench_$dtype.log | head -16
done
head -n 24 $OUT/profile_wan2.2_bf16.log | cut -c1-150
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
