#!/usr/bin/env bash
# session 46, command A: LATENT_STAGE_SMALLER_FRAMES (branch s46-smaller-groups): Wan2.2 bf16 720x1280 bench
# (exactness asserted), the stage's verdicts, then the latent stage's and the decoder's CUDA tests in parallel.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
timeout 150 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 720x1280 --compile-cases \
  --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench_wan2.2.log | tail -n 7
timeout 60 python3 - <<'PY' 2>&1 | grep -v "^DEBUG" | tee $OUT/verdicts.log
import argparse, torch
from torch_wanops.bench import decode_case, variant
from torch_wanops import decoder
vae, z = decode_case(argparse.Namespace(model="wan2.2", dtype="bf16", size="720x1280", frames=81), "cuda")
with variant(vae, "wanops-eager"), torch.no_grad():
    vae.decode(z, return_dict=False)
for key, verdict in decoder._latent_stage_verdicts.items():
    print(key[0].input_shape, len(key[2]), verdict)
PY
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 240 $P -m cuda tests/test_latent_stage.py > /tmp/t_stage.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/dec$g
  timeout 240 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
