#!/usr/bin/env bash
# session 32, command B: the batched stage carried through the first up block's upsampler and the second up block's
# residual blocks (decoder.LATENT_STAGE_THROUGH_SECOND_UP_BLOCK, each norm reduced per chunk: rms_norm_cat_pad_5d's
# norm_frames). bf16 480x832 decodes side by side with stock and with the switch off (alone on the GPU), then the
# new op tests, the decoder's and the latent stage's CUDA tests in parallel processes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --repeat 5 --stage-to-first-up-block --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A6 "^variant"
t=300
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -s -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_rms_norm_cat_pad_5d.py -k "norm_frames or frame_slices or raw_conv_output or kernel_is_atens or opcheck" > /tmp/t_rms.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; grep "verdicts" $f; tail -n 3 $f; done
