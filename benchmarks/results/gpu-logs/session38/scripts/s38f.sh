#!/usr/bin/env bash
# session 38, command F: D's two fp32 failures rerun on the magic-number tree and on a3a3be3's (old.tar), then E.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
mkdir -p /tmp/o && tar xf .gpu/old.tar -C /tmp/o
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
(PYTHONPATH=/tmp/site:$PWD timeout 60 python3 .gpu/s38_repro.py $PWD; PYTHONPATH=/tmp/site:/tmp/o/old timeout 60 python3 .gpu/s38_repro.py /tmp/o/old;
 PYTHONPATH=/tmp/site:$PWD timeout 60 python3 -m pytest -q -p no:cacheprovider tests/test_indexing.py 2>&1 | tail -n 2) 2>&1 | grep -v DEBUG | tee $OUT/repro.log
bash .gpu/s38e.sh
