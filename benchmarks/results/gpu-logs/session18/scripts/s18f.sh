#!/usr/bin/env bash
# session 18, command F: chunked convs' bias/residual epilogue (CHUNKED_CONV_EPILOGUES): CUDA tests, Wan2.1 decodes
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 70 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_conv3d_chunked.py -k "epilogue or opcheck or cudnns_bits" > $OUT/t_op.log 2>&1; tail -n 4 $OUT/t_op.log
timeout 110 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "chunked_convs_on_cuda or route or tf32_grid" > $OUT/t_decoder.log 2>&1; tail -n 4 $OUT/t_decoder.log
timeout 200 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 bf16 --sizes 480x832 --compile-cases --separate-chunked-epilogues \
      --out $OUT/bench > $OUT/bench.log 2>&1
grep -h -B1 -A5 "^variant" $OUT/bench.log | head -16
