#!/usr/bin/env bash
# Prepared in session 56, not run: the fixed upsample-layout expectation on CUDA, then the CUDA tests session 56's D
# and E did not reach (E stopped in test_non_default_switches_decode_bit_exact_on_cuda). Two commands on a warm
# machine: `next_cuda_tests.sh 1` (~450 s), `next_cuda_tests.sh 2`.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -v -p no:cacheprovider -rfE --tb=short -m cuda"
if [ "${1:-1}" = 1 ]; then
  timeout 120 $P tests/test_decoder.py -k fused_upsample 2>&1 | grep -v "^DEBUG" | tee $OUT/fused_upsample.log | tail -n 3
  timeout 420 $P tests/test_decoder.py -k "non_default_switches or frame_major_norms_in_stock_layout" 2>&1 \
    | grep -v "^DEBUG" > $OUT/switches.log; grep -c PASSED $OUT/switches.log; tail -n 3 $OUT/switches.log
else
  timeout 540 $P tests/test_autocast.py tests/test_latent_stage.py 2>&1 | grep -v "^DEBUG" > $OUT/autocast_stage.log
  grep -c PASSED $OUT/autocast_stage.log; tail -n 3 $OUT/autocast_stage.log
fi
