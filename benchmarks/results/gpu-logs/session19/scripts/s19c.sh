#!/usr/bin/env bash
# session 19, command C: conv3d_chunked's tail split (segment_k_on) and wider fp32 tile: CUDA tests, Wan2.1 decodes
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 130 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_conv3d_chunked.py -k "tf32_grid_inputs or tail or (cudnns_bits and float32)" > $OUT/t_op.log 2>&1; tail -n 6 $OUT/t_op.log
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "(chunked_convs_on_cuda and float32) or runs_faster or tail_split" > $OUT/t_decoder.log 2>&1; tail -n 6 $OUT/t_decoder.log
timeout 260 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 bf16 --sizes 480x832 --compile-cases --out $OUT/bench > $OUT/bench.log 2>&1
tail -n 12 $OUT/bench.log
timeout 100 python3 benchmarks/profile_decode.py --model wan2.1 --dtype fp32 --variants wanops-eager --top 25 --out $OUT > $OUT/profile_wan2.1.log 2>&1
head -n 30 $OUT/profile_wan2.1.log | cut -c1-150
