#!/usr/bin/env bash
# session 46, command B: the _runs_faster timing test (wider margin) alone three times, the new lever's decode
# tests; interleaved_levers.py on Wan2.2 bf16 720x1280 with the five-frame-groups row (LATENT_STAGE_SMALLER_FRAMES
# off), then 480x832 with the aten-reduced-upsampler-outputs row (clock/power per variant).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
for i in 1 2 3; do
  timeout 30 $P tests/test_decoder.py -k hides_the_candidates 2>&1 | grep -v "^DEBUG" | tail -n 1
done | tee $OUT/timing_test.log
timeout 90 $P tests/test_decoder.py -k five-frame-stage-groups 2>&1 | grep -v "^DEBUG" | tee $OUT/tests.log | tail -n 1
timeout 250 python3 benchmarks/interleaved_levers.py --model wan2.2 --dtype bf16 --size 720x1280 --rounds 7 \
  --levers wanops-eager-five-frame-stage-groups 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_720.log | tail -n 8
timeout 170 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 \
  --levers wanops-eager-aten-reduced-upsampler-outputs 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_480.log | tail -n 8
