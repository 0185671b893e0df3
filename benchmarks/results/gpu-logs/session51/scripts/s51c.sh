#!/usr/bin/env bash
# session 51, prepared, not run: the ops' CUDA lists that s51a.sh's 200 s limit cut (226 of 621 ran, none failed).
# test_rms_norm_cat_pad_5d.py's 515 took ~190 s for 226 there: run this as a command of its own.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 560 $P -m cuda tests/test_rms_norm_cat_pad_5d.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_rms_norm.log | tail -n 1
