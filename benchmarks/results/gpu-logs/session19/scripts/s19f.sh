#!/usr/bin/env bash
# session 19, command F: the decoder's chunked-conv verdicts and refusal reasons in Wan2.1 fp32 decodes
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 150 python3 .gpu/s19f.py > $OUT/verdicts.log 2>&1; grep -i "verdict\|chunked\|slower\|not sum\|not bit" $OUT/verdicts.log | cut -c1-400 | head -60
