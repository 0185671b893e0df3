#!/usr/bin/env bash
# session 11, command E: final code (fp16 on the conv-layout lever by default): decoder CUDA tests; fp16 480x832 side by side
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
timeout 120 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes fp16 --sizes 480x832 --compile-cases \
    --fp16-stock-conv-layout --out $OUT/fp16 > $OUT/fp16.log 2>&1
timeout 330 bash -c "$(declare -f pyt); pyt -k cuda tests/test_decoder.py" > $OUT/t_decoder_cuda.log 2>&1
grep -h -B2 -A6 "^variant" $OUT/fp16.log; tail -n 8 $OUT/t_decoder_cuda.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
