#!/usr/bin/env bash
# session 43, command G (INTERLEAVED_TIME_CONV_OUTPUTS): the op's CUDA tests (real sizes, the time conv interleaves),
# the decoder's four lists, its new switch row and the latent stage's; then interleaved_levers.py on both models
# with the switch off as the lever row, 5 rounds each.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 210 $P -m cuda tests/test_bias_add_contiguous.py -k "time_conv or real_decoder_sizes or dup_up3d" > /tmp/t_op.log 2>&1 &
timeout 210 $P tests/test_decoder.py -k "stacked-time-conv or interleaved_time_conv" > /tmp/t_dec_new.log 2>&1 &
timeout 210 $P -m cuda tests/test_latent_stage.py > /tmp/t_stage.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout 210 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
for m in wan2.2 wan2.1; do
  timeout 110 python3 benchmarks/interleaved_levers.py --model $m --rounds 5 \
    --levers wanops-eager-stacked-time-conv-outputs 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_$m.log | tail -n 7
done
