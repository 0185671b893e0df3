#!/usr/bin/env bash
# session 42, command E (branch s42-epilogue-norm): the memory peaks with EPILOGUE_NORMS (stock and wanops eager, bf16
# 480x832x81, both models) and test_reliability beside them. Logs straight to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_reliability.py > $OUT/reliability.log 2>&1 &
for m in wan2.2 wan2.1; do
  timeout 160 python3 benchmarks/memory_decode.py --model $m --dtype bf16 --variants diffusers-eager wanops-eager \
    --out $OUT/memory 2>&1 | grep -v "^DEBUG" | grep -i "peak\|GiB" | head -8 | tee $OUT/memory_$m.log
done
wait
tail -n 3 $OUT/reliability.log
