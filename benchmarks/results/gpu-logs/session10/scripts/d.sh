#!/usr/bin/env bash
# session 10, command D: layout-pass list widened: refused geometries, lever CUDA tests, bf16 eager both models; fp32 wan2.1 compiled cell
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
(
  export CUDA_VISIBLE_DEVICES=0
  timeout 60 python3 .gpu/dbg2.py > $OUT/dbg2.log 2>&1
  timeout 130 bash -c "$(declare -f pyt); pyt -k 'cuda and (channels_last_conv or frame_major_norms_in_stock or fused_upsample_keeps)' tests/test_decoder.py" > $OUT/t_lever.log 2>&1
  timeout 200 python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
    --out $OUT/bf16 > $OUT/bf16.log 2>&1
  timeout 130 bash -c "$(declare -f pyt); pyt -k 'cuda and not (channels_last_conv or frame_major_norms_in_stock or fused_upsample_keeps)' tests/test_decoder.py" > $OUT/t_rest.log 2>&1
) &
(
  export CUDA_VISIBLE_DEVICES=1
  timeout 500 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 480x832 --compile-cases fp32:480x832 \
    --out $OUT/fp32c_wan2.1 > $OUT/fp32c_wan2.1.log 2>&1
) &
wait
grep -h "refused" $OUT/dbg2.log; tail -n 2 $OUT/t_lever.log $OUT/t_rest.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; ls
