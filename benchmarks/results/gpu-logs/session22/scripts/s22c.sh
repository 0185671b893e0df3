#!/usr/bin/env bash
# session 22, command C: wan_rms_norm (norms outside the fused layouts as one op) and the upsample-layout test on CUDA, the CUDA compile tests; Wan2.1 bf16 480x832 stock, eager, compiled side by side
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_wan_rms_norm.py > $OUT/t_norm.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "fused_upsample or norms_outside or refused" > $OUT/t_decoder.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short -s tests/test_compile.py -k "cuda" > $OUT/t_compile.log 2>&1 &
wait
for f in t_norm t_decoder t_compile; do grep -v "^DEBUG" $OUT/$f.log | grep -i "diff\|passed\|failed\|^E " | tail -n 8; done
timeout 340 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; grep -i "max\|psnr" $OUT/bench.log | head -5; tail -n 2 $OUT/bench.log
