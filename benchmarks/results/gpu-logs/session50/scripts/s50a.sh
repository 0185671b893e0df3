#!/usr/bin/env bash
# session 50, prepared, not run (no machine lent): the ops now carry torch's needs_exact_strides tag (torch 2.11's
# default for custom ops already) and DupUp3DShortcut.added_to names its fields. The compile path's CUDA tests, the
# fused norm's and cat_pad_5d's CUDA tests, and the real configs' compiled 16-bit decodes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 300 $P tests/test_compile.py -k cuda 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_compile.log | tail -n 1
timeout 240 $P -m cuda tests/test_rms_norm_cat_pad_5d.py tests/test_cat_pad_5d.py tests/test_wan_rms_norm.py 2>&1 \
  | grep -v "^DEBUG" | tee $OUT/tests_ops.log | tail -n 1
