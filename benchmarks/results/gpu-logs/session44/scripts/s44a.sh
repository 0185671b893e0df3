#!/usr/bin/env bash
# session 44, command A (PER_CHUNK_WEIGHT_COPIES): the decoder's CUDA tests (switch rows: the new one only), the
# weight-copy tests, the latent stage's; then interleaved_levers.py on Wan2.2 with the switch off as the lever row.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 260 $P -m cuda tests/test_channels_last_copy.py > /tmp/t_copy.log 2>&1 &
timeout 260 $P tests/test_decoder.py -k "first-come-weight-copies" > /tmp/t_switch.log 2>&1 &
timeout 260 $P -m cuda tests/test_latent_stage.py > /tmp/t_stage.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/dec$g
  timeout 260 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
timeout 280 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 \
  --levers wanops-eager-first-come-weight-copies 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_wan2.2.log | tail -n 9
