#!/usr/bin/env bash
# session 22, command F (inline): the mid block attention at 480x832 compiled against eager, as it is and with its SDPA as one op
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl; export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1; timeout 140 python3 .gpu/s22diag4.py 2>&1 | grep -v "^DEBUG" | grep "equal\|Error" | tee $OUT/diag_attention.log
