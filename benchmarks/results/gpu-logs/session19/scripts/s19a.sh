#!/usr/bin/env bash
# session 19, command A: conv3d_chunked tiles at cuDNN's segment_k_on geometries; which tiles cuDNN splits, and how
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 300 python3 benchmarks/probe_split_tiles.py --tile-limit 2 --geometries 2 0 3 4 5 > $OUT/split.log 2>&1; cat $OUT/split.log | cut -c1-1500
timeout 200 python3 .gpu/s19tile.py > $OUT/tile.log 2>&1; cat $OUT/tile.log
