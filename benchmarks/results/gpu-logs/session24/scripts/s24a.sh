#!/usr/bin/env bash
# session 24, command A (branch compiled-caches-in-place): refresh_cache's tests, the CUDA compile tests (incl. the real configs, which assert in-place caches), the decoder's in-place test and the compiled memory peak, side by side; then Wan2.1 bf16 480x832 stock, eager, compiled
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch,triton;print(torch.__version__,triton.__version__,torch.backends.cudnn.version())"; git log --oneline -1 2>/dev/null
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_refresh_cache.py tests/test_decoder.py -k "refresh or write_the_next_cache" > $OUT/t_refresh.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_compile.py -k "cuda and not real_config" > $OUT/t_compile.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_compile.py -k "real_config_bf16_decode_gives_stock_bits_on_cuda" > $OUT/t_compile_real.log 2>&1 &
timeout 200 python3 benchmarks/memory_decode.py --model wan2.1 --dtype bf16 --variants wanops-eager wanops-compiled --out $OUT/memory > $OUT/memory.log 2>&1 &
wait
for f in t_refresh t_compile t_compile_real; do grep -v "^DEBUG" $OUT/$f.log | grep -i "diff\|passed\|failed\|^E \|timeout\|error" | tail -n 12; done
grep -v "^DEBUG" $OUT/memory.log | grep -i "peak\|GiB\|error" | head -n 20
timeout 380 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep "median" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; tail -n 2 $OUT/bench.log
