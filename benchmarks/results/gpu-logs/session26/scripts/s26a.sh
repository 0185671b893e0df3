#!/usr/bin/env bash
# session 26, command A (prepared in session 25): the rest of the rms CUDA tests on eaa1c99's kernel, then
# conv3d_chunked's tiles at 96 -> 96 6x722x1282 fp32 (Wan2.1 720x1280's 0.93 s), then at 6x482x834.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 330 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_rms_norm_cat_pad_5d.py -k cuda > $OUT/t_rms.log 2>&1
grep -v "^DEBUG" $OUT/t_rms.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
timeout 150 python3 benchmarks/sweep_conv_tiles.py > $OUT/sweep_conv_720.log 2>&1; cat $OUT/sweep_conv_720.log
timeout 100 python3 benchmarks/sweep_conv_tiles.py --shape 1 96 6 482 834 > $OUT/sweep_conv_480.log 2>&1; cat $OUT/sweep_conv_480.log
