#!/usr/bin/env bash
# session 44, command F (LATENT_STAGE_GROUP_BY_NORM_SPLIT): Wan2.2 bf16 720x1280's group and stage verdicts; its
# bench_decode.py cell with the fixed-group lever row (medians of 3).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 60 python3 .gpu/s44_groups.py 2>&1 | grep -v "^DEBUG" | grep -i "group\|verdict\|latent" | tee $OUT/groups.log
cp benchmarks/results/decode.json $OUT/
timeout 220 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 720x1280 --compile-cases \
  --repeat 3 --fixed-latent-groups --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 8
