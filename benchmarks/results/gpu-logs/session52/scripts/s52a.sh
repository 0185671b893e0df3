#!/usr/bin/env bash
# session 52, prepared without a GPU, not run: session 37's PTX norm arithmetic (per-column reciprocal division with
# Markstein's correction, the SiLU table read by inline PTX) for launches whose x and output are channels-last,
# applied from ptx_norm.diff (made against main at 7fcadfc; no unlanded branch outlives a session, so the lever
# travels as a diff). First its exactness on the GPU (every 16-bit dividend over 2048 divisors; the real configs'
# bf16 decodes; the switch-off rows), then its energy: interleaved_levers at Wan2.2 bf16 480x832, 7 rounds, both
# switch-off rows, the J column (session 49's noise floor ~2.3 J over 7 rounds; 1.85x needs ~12 J).
# Needs .whl (diffusers 0.42.1 and importlib_metadata wheels for cp312) carried: run(carry=[".whl"]).
set -o pipefail
HERE=benchmarks/results/gpu-logs/session52/scripts
git apply "$HERE/ptx_norm.diff" 2>/dev/null || patch -p1 --forward < "$HERE/ptx_norm.diff" || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 150 $P -m cuda tests/test_norm_ptx.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_norm_ptx.log | tail -n 1
timeout 200 $P tests/test_decoder.py \
  -k "(real_configs_on_cuda and bfloat16) or (non_default_switches and (ieee-division or loaded-silu))" 2>&1 \
  | grep -v "^DEBUG" | tee $OUT/tests_switches.log | tail -n 1
timeout 230 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 \
  --levers wanops-eager-ieee-division-norms wanops-eager-loaded-silu-table 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/interleaved.log | tail -n 12
