#!/usr/bin/env bash
# session 15, command A: profiles of the current code (bf16 480x832x81, both models); weight-copy microbench
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
python3 .gpu/wcopy.py 2>&1 | tee $OUT/wcopy.log
for m in wan2.1 wan2.2; do
  python3 benchmarks/profile_decode.py --model $m --variants wanops-eager --top 45 --out $OUT > $OUT/profile_$m.log 2>&1
  head -40 $OUT/profile_$m.log
done
