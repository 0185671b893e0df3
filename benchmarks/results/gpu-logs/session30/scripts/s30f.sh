#!/usr/bin/env bash
# session 30, command F: decoder.BATCHED_LATENT_STAGE on the H200: whole bf16 480x832x81 decodes against stock and
# timed with the switch off and on (s30f.py), then the switch's CUDA tests (tests/test_latent_stage.py -k cuda).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
git log --oneline -1 > $OUT/commit.txt; git status --short >> $OUT/commit.txt
timeout 170 python3 "$(dirname "$0")/s30f.py" 2>&1 | grep -v "^DEBUG" > $OUT/batched_stage.log; cat $OUT/batched_stage.log
timeout 110 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -s -k cuda tests/test_latent_stage.py 2>&1 | grep -v "^DEBUG" > $OUT/t_latent_stage.log; grep -v "^$" $OUT/t_latent_stage.log | tail -20
