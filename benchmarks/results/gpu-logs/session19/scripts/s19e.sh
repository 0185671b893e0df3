#!/usr/bin/env bash
# session 19, command E: why 720x1280's 192- and 384-channel fp32 convs kept cuDNN's conv
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 120 python3 .gpu/s19e.py > $OUT/geometries720.log 2>&1; cat $OUT/geometries720.log | cut -c1-700
timeout 200 python3 benchmarks/probe_split_tiles.py --tile-limit 1 --geometries 6 2 > $OUT/split720.log 2>&1; grep -v "differing tiles" $OUT/split720.log | cut -c1-600
