#!/usr/bin/env bash
# session 24, command E then F: Inductor's compiler bisector on the fp32 compiled CUDA difference (wan2.1-tiny); F bisects the lowerings only; G without the crossref backend
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 200 python3 .gpu/s24bisect.py 2>&1 | grep -v "^DEBUG\|Warning\|warn" > $OUT/bisect.log
grep -v "^run:" $OUT/bisect.log | tail -n 30; grep -c "^run:" $OUT/bisect.log; tail -n 3 $OUT/bisect.log
