#!/usr/bin/env bash
# session 45, command A: SM clock/power per decode (stock, wanops) at 720x1280 and 480x832; both variants' per-kernel
# profiles at 720x1280; the 45x80 latent stage's per-op frame-batching probe.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit,power.max_limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
cat $OUT/meta.txt
for size in 720x1280 480x832; do
  timeout 150 python3 benchmarks/clock_power.py --model wan2.2 --dtype bf16 --size $size --rounds 3 2>&1 \
    | grep -v "^DEBUG" > $OUT/clock_$size.log; cat $OUT/clock_$size.log
done
timeout 150 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --size 720x1280 --top 40 --out $OUT 2>&1 \
  | grep -v "^DEBUG" > $OUT/profile.log; grep -A40 "kernels both ran" $OUT/profile.log | head -60
timeout 150 python3 benchmarks/probe_frame_batching.py --model wan2.2 --dtype bf16 --size 720x1280 --groups 2 3 4 5 2>&1 \
  | grep -v "^DEBUG" > $OUT/probe.log; cat $OUT/probe.log
