#!/usr/bin/env bash
# session 22, command E: the compiled bf16 decode with parts run eagerly (attention, resamplers), per chunk against stock
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 330 python3 .gpu/s22diag3.py > $OUT/diag_parts.log 2>&1
grep -v "^DEBUG" $OUT/diag_parts.log | grep "eager:\|Error" | head
