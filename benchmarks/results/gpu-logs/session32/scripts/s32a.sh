#!/usr/bin/env bash
# session 32, command A: 90925ae's decoder refactor (up_block's branches merged, decode_latents pops in order) on
# the H200: every decoder CUDA test and tests/test_latent_stage.py -k cuda in parallel processes; session 31's E
# probe (which of Wan2.2's second up block's first residual block steps leave the one-chunk bits at 10 frames
# per call) beside them.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt
t=300
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout 200 python3 .gpu/s31e_probe.py 2>&1 | grep -v "^DEBUG" > $OUT/probe_e.log; cat $OUT/probe_e.log
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 3 $f; done
timeout 120 python3 benchmarks/sweep_conv_tiles.py --shape 1 256 6 242 418 --out-channels 12 --dtype bf16 2>&1 | grep -v "^DEBUG" > $OUT/sweep_head.log; cat $OUT/sweep_head.log
