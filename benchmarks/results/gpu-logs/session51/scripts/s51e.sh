#!/usr/bin/env bash
# session 51, prepared on branch s51-ptx-norm, not run: session 37's PTX norm arithmetic (per-column reciprocal
# division, SiLU table read by inline PTX), now only where x and the output are channels-last. First its exactness
# on the GPU (every 16-bit dividend; the fused norm's CUDA tests that cover channels-last x; the decoder's switch-off
# rows), then its energy: interleaved_levers at Wan2.2 bf16 480x832, 7 rounds, both switch-off rows. Session 37 read
# it by time only (1.000 s against 1.006 / 1.002 s off, taken for spread); since session 46 a lever is worth its
# energy, which the J column now shows (noise floor ~2.3 J, session 49).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 150 $P -m cuda tests/test_norm_ptx.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_norm_ptx.log | tail -n 1
timeout 200 $P tests/test_decoder.py -k "(real_configs_on_cuda and bfloat16) or (non_default_switches and (ieee-division or loaded-silu))" 2>&1 \
  | grep -v "^DEBUG" | tee $OUT/tests_switches.log | tail -n 1
timeout 230 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 \
  --levers wanops-eager-ieee-division-norms wanops-eager-loaded-silu-table 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/interleaved.log | tail -n 12
