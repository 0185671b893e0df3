#!/usr/bin/env bash
# session 18, command B: _ON_TF32_GRID_ONLY geometries only where the op ran faster; CUDA tests, fp32 decodes 480x832 and 720x1280
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "chunk or tf32 or runs_faster or verdicts" > $OUT/t_decoder.log 2>&1; tail -n 6 $OUT/t_decoder.log
timeout 250 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes fp32 --sizes 480x832 --tf32-rounding-in-conv --cudnn-convs \
      --out $OUT/bench_fp32 > $OUT/bench_fp32.log 2>&1
grep -h -B1 -A8 "^variant" $OUT/bench_fp32.log | head -30; grep -h "conv3d_chunked\|keeps cuDNN\|slower" $OUT/bench_fp32.log | sort | uniq -c | head -20
timeout 150 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 720x1280 --repeat 2 \
      --out $OUT/bench_fp32_720 > $OUT/bench_fp32_720.log 2>&1
grep -h -B1 -A6 "^variant" $OUT/bench_fp32_720.log | head -12
