#!/usr/bin/env bash
# session 18, command A: TF32-grid conv inputs (fused norm rounds, conv3d_chunked truncate_x): op timing, CUDA tests, fp32 decodes
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
timeout 90 python3 .gpu/s18tile.py > $OUT/tile.log 2>&1; cut -c1-200 $OUT/tile.log
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_conv3d_chunked.py tests/test_rms_norm_cat_pad_5d.py -k "not test_rms_norm_cat_pad_5d or tf32 or (real_decoder_sizes and float32)" > $OUT/t_ops.log 2>&1; tail -n 8 $OUT/t_ops.log
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "chunked or verdicts or tf32" > $OUT/t_decoder.log 2>&1; tail -n 8 $OUT/t_decoder.log
timeout 230 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes fp32 --sizes 480x832 --tf32-rounding-in-conv \
      --out $OUT/bench_fp32 > $OUT/bench_fp32.log 2>&1
grep -h -B1 -A7 "^variant" $OUT/bench_fp32.log | head -30; grep -h "conv3d_chunked" $OUT/bench_fp32.log | sort | uniq | head
