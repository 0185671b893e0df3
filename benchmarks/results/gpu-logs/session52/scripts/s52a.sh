#!/usr/bin/env bash
# session 52, prepared without a GPU, not run: the exactness of its two prepared levers on the GPU, applied from
# their diffs (apply_prepared.sh): the PTX norm arithmetic (every 16-bit dividend over 2048 divisors, the fallback,
# the table read) and the zero-frame taps (tiny configs' decodes in bf16, fp16, fp32 against stock; every geometry
# the check took compared again on random inputs; it prints how many it took), then the real configs' bf16 decodes
# and the three switch-off rows. Needs .whl carried: run(carry=[".whl"]). Then s52b.sh on the same warm machine.
set -o pipefail
bash benchmarks/results/gpu-logs/session52/scripts/apply_prepared.sh | tee $OUT/apply.log || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 120 $P -m cuda tests/test_norm_ptx.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_norm_ptx.log | tail -n 1
timeout 150 $P -s -m cuda tests/test_zero_frame_taps.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_zero_frame_taps.log \
  | grep -E "geometries skip|passed|failed"
timeout 280 $P tests/test_decoder.py -k "(real_configs_on_cuda and bfloat16) or (non_default_switches and \
(ieee-division or loaded-silu or whole-first-chunk))" 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_switches.log | tail -n 1
