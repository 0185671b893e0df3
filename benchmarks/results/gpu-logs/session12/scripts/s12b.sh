#!/usr/bin/env bash
# session 12, command B: decoder CUDA tests alone (code since a08b6d0); bf16 480x832 both models (refusals listed)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
timeout 380 bash -c "$(declare -f pyt); pyt -k cuda tests/test_decoder.py" > $OUT/t_decoder_cuda.log 2>&1
timeout 150 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
    --out $OUT/bf16_480 > $OUT/bf16_480.log 2>&1
grep -h -B2 -A8 "^variant" $OUT/bf16_480.log; grep -i refus $OUT/bf16_480.log | head; tail -n 8 $OUT/t_decoder_cuda.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
