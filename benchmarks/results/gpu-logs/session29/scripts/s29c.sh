#!/usr/bin/env bash
# session 29, command C: the one-pass block transition prototype (s29c.py) against today's two launches.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 400 python3 .gpu/s29c.py --shapes 256,4,240,416 512,4,240,416 512,4,120,208 1024,4,120,208 1024,4,60,104 \
  --tiles 64,32 32,64 128,16 64,64 128,32 $1 2>&1 | grep -v "^DEBUG" > $OUT/transition$1.log; cat $OUT/transition$1.log
