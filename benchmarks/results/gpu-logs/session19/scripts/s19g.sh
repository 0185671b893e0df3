#!/usr/bin/env bash
# session 19, command G: the merged kernel (tail split as a TAIL_SEGMENTS mode): op CUDA tests
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 110 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_conv3d_chunked.py -k "tf32_grid_inputs or tail" > $OUT/t_op.log 2>&1; tail -n 4 $OUT/t_op.log
