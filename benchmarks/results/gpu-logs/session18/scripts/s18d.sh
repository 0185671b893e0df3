#!/usr/bin/env bash
# session 18, command D: the rms_norm_cat_pad_5d tf32_out and fp32 real-size CUDA tests in full; bf16 decodes after the change
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_rms_norm_cat_pad_5d.py -k "tf32 or (real_decoder_sizes and float32)" > $OUT/t_rms.log 2>&1; tail -n 4 $OUT/t_rms.log
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_conv3d_chunked.py -k "tf32 or truncat or nan" -v > $OUT/t_op.log 2>&1; grep -c PASSED $OUT/t_op.log; grep -E "FAILED|SKIPPED|passed|failed" $OUT/t_op.log | tail -n 6
timeout 200 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
      --out $OUT/bench_bf16 > $OUT/bench_bf16.log 2>&1
grep -h -B1 -A4 "^variant" $OUT/bench_bf16.log | head -14
