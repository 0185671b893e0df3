#!/usr/bin/env bash
# session 26, command D: the chunked-conv check reads cuDNN's segment_k_on tail split off its probe
# (_tail_split_giving) instead of deriving it: the CUDA tests of the op and the check, then Wan2.1 fp32
# 720x1280 and 480x832 side by side (the later-chunk 384 -> 384 convs at 4x182x322 should now run the op).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_conv3d_chunked.py -k "tf32_grid or tail" > $OUT/t_conv.log 2>&1
grep -v "^DEBUG" $OUT/t_conv.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "chunked or tail or runs_faster" > $OUT/t_dec.log 2>&1
grep -v "^DEBUG" $OUT/t_dec.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
for size in 720x1280 480x832; do
  timeout 150 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes $size --compile-cases --out /tmp/bd >> $OUT/bench_fp32.log 2>&1
  cp /tmp/bd/decode.json $OUT/decode_fp32.json
done
grep -A4 "^variant\|not bit-exact\|slower than" $OUT/bench_fp32.log; grep "^conv run" $OUT/bench_fp32.log | sort | uniq
