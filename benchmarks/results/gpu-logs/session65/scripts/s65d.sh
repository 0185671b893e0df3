#!/usr/bin/env bash
# session 65 D: conv3d_chunked's tail-split run count as a runtime argument (one compile for every count the check
# tries, not one each). Wan2.1 fp32 720x1280x81 against stock with an empty Triton cache (the first call's time,
# bit-exactness; session 65 A: first call 129 s, B: 80 compiles, C: 21 + 10 of them tail-split counts), then the
# op's tail tests (on CUDA) and the real configs' fp32 decodes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD HYPOTHESIS_PROFILE=ci TRITON_CACHE_DIR=/tmp/tc65d
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
rm -rf /tmp/tc65d && mkdir -p $OUT/bench
timeout 200 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 \
  --sizes 720x1280 --repeat 1 --compile-cases --out $OUT/bench 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" \
  | tee $OUT/bench/bench.log | tail -n 5
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 70 $P tests/test_conv3d_chunked.py -k tail 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_conv.log | tail -n 2
timeout 50 $P -m cuda tests/test_decoder.py -k "real_configs_on_cuda and float32" 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/tests_real_fp32.log | tail -n 2
