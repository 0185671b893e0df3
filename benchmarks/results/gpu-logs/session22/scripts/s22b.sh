#!/usr/bin/env bash
# session 22, command B: the CUDA decoder tests (A's timed out at 250 s, 22 passed); compiled real-config bf16 decodes per chunk against stock, with Dynamo's graph code
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 540 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short --durations=12 tests/test_decoder.py -k "cuda or refused" > $OUT/t_decoder.log 2>&1 &
TORCH_LOGS=graph_code timeout 500 python3 .gpu/s22diag.py wan2.1 > $OUT/diag.log 2> $OUT/diag_graph_code.log
grep -v "^DEBUG" $OUT/diag.log | tail -n 20
grep -c "normalize" $OUT/diag_graph_code.log; grep "normalize\|GRAPH\|TRACED" $OUT/diag_graph_code.log | cut -c1-220 | sort | uniq -c | sort -rn | head -20
wait
grep -v "^DEBUG" $OUT/t_decoder.log | grep -i "passed\|failed\|^E \|s call" | tail -n 30
