#!/usr/bin/env bash
# session 27, command C: FUSED_SHORTCUT_BIASES on/off interleaved with kernel totals (B's decode medians were
# within noise of each other), and the full profile of the Wan2.2 bf16 decode.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 400 python3 .gpu/s27c.py $OUT/profile_wan2.2_bf16_full.txt > $OUT/shortcut.log 2>&1
grep -v "^DEBUG" $OUT/shortcut.log | tail -n 40
