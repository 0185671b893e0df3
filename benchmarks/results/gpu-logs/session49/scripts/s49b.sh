#!/usr/bin/env bash
# session 49, command B: the compile path's CUDA tests (a compiled decode under autocast sets it aside too), the two
# real-config decodes A's time limit cut, then
# bench_decode.py's interleaved timing at Wan2.2 bf16 480x832 (medians of 7; session 47's change, not yet run on a GPU).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 300 $P tests/test_compile.py -k cuda 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_compile.log | tail -n 1
timeout 60 $P tests/test_decoder.py -k "real_configs_on_cuda and True-torch.float32" 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/tests_real.log | tail -n 1
timeout 120 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 7 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench_wan2.2.log | tail -n 7
