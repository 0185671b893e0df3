#!/usr/bin/env bash
# session 44, command E: the compile path's CUDA tests; a profile of Wan2.2 bf16 720x1280 (stock and wanops-eager).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_compile.py 2>&1 | grep -v "^DEBUG" > $OUT/tests.log; tail -n 1 $OUT/tests.log
timeout 200 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --size 720x1280 --top 60 --out $OUT 2>&1 \
  | grep -v "^DEBUG" > $OUT/profile.log; grep "total CUDA" $OUT/profile.log
