#!/usr/bin/env bash
# session 27, command A (prepared in session 26): the bf16 fused norm against its transposing copy at Wan2.2's
# shapes (how far from copy speed is the 0.093 s of cat_pad_5d_kernel in session26/F's profile?).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 200 python3 .gpu/s27grid.py > $OUT/grid_wan22.log 2>&1; cut -c1-75 $OUT/grid_wan22.log
