#!/usr/bin/env bash
# session 46, command C: Wan2.1 bf16 720x1280: the latent stage's verdicts (does it take groups of 3?), the bench
# cell (exactness asserted), and where groups of 3 ran, interleaved_levers.py with the five-frame-groups row.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 70 python3 - <<'PY' 2>&1 | grep -v "^DEBUG" | tee $OUT/verdicts.log
import argparse, torch
from torch_wanops.bench import decode_case, variant
from torch_wanops import decoder
vae, z = decode_case(argparse.Namespace(model="wan2.1", dtype="bf16", size="720x1280", frames=81), "cuda")
with variant(vae, "wanops-eager"), torch.no_grad():
    for _ in range(2):
        vae.decode(z, return_dict=False)
for key, verdict in decoder._latent_stage_verdicts.items():
    print(key[0].input_shape, len(key[2]), verdict)
PY
timeout 160 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 720x1280 --compile-cases \
  --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench_wan2.1.log | tail -n 5
if grep -qE "3, 90, 160\) [12] True" $OUT/verdicts.log; then
  timeout 240 python3 benchmarks/interleaved_levers.py --model wan2.1 --dtype bf16 --size 720x1280 --rounds 5 \
    --levers wanops-eager-five-frame-stage-groups 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_720.log | tail -n 7
fi
