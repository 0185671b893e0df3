#!/usr/bin/env bash
# session 23, command B: the split-rule probe at 720x1280's later-chunk geometries and the rest of the CUDA decoder tests (side by side); then Wan2.2 bf16 480x832 stock, eager, compiled
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 330 python3 benchmarks/probe_split_tiles.py --geometries 2 6 --min-length 12 > $OUT/probe.log 2>&1 &
timeout 330 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "chunked_convs_on_cuda or runs_faster or non_default_switches or frame_major_norms_in_stock_layout_decode_bit_exact_on_cuda" > $OUT/t_decoder_rest.log 2>&1 &
wait
grep -v "^DEBUG" $OUT/t_decoder_rest.log | grep -i "passed\|failed\|^E " | tail -n 8
grep -v "^DEBUG" $OUT/probe.log | tail -n 40
timeout 230 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; tail -n 2 $OUT/bench.log
