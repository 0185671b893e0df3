#!/usr/bin/env bash
# session 64 B, on any card (run as one command line, kept here): the other test files' CUDA lists that touch the tiny
# configs, after num_res_blocks=1, in two processes side by side.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="timeout 380 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda"
$P tests/test_channels_last_copy.py tests/test_clock_power.py tests/test_diffusers_code.py tests/test_profile_decode.py \
  2>&1 | grep -v "^DEBUG" > $OUT/other_tiny_a.log &
$P tests/test_rms_norm_cat_pad_5d.py -k "tiny or decode or vae" 2>&1 | grep -v "^DEBUG" > $OUT/other_tiny_b.log &
wait
tail -n 2 $OUT/*.log
