#!/usr/bin/env bash
# session 10, command B: the kernel-identity conv check (fp32 lever on by default): CUDA tests, fp32 + bf16 480x832 side by side
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
fp32() { timeout 240 python3 benchmarks/bench_decode.py --models $1 --dtypes fp32 --sizes 480x832 --compile-cases \
    --fp32-stock-conv-layout --out $OUT/fp32_$1 > $OUT/fp32_$1.log 2>&1; }
(
  export CUDA_VISIBLE_DEVICES=0
  timeout 240 bash -c "$(declare -f pyt); pyt -k 'cuda and (channels_last_conv or frame_major_norms_in_stock)' tests/test_decoder.py" > $OUT/t_lever.log 2>&1
  fp32 wan2.1
) &
(
  export CUDA_VISIBLE_DEVICES=1
  timeout 60 python3 .gpu/dbg.py > $OUT/dbg.log 2>&1
  fp32 wan2.2
  timeout 110 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases \
    --out $OUT/bf16_wan2.1 > $OUT/bf16_wan2.1.log 2>&1
  timeout 150 bash -c "$(declare -f pyt); pyt -k 'cuda and not (channels_last_conv or frame_major_norms_in_stock)' tests/test_decoder.py" > $OUT/t_rest.log 2>&1
) &
wait
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; ls
