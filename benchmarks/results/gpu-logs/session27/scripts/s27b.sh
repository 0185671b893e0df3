#!/usr/bin/env bash
# session 27, command B: FUSED_SHORTCUT_BIASES (the 1x1x1 shortcut convs run without their bias, which
# conv2's bias epilogue adds): CUDA tests of the op and the decoder, then Wan2.2 and Wan2.1 bf16 480x832
# side by side with stock and with the switch off.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
timeout 60 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_bias_add_contiguous.py -k "cuda or triton" > $OUT/t_bias.log 2>&1
grep -v "^DEBUG" $OUT/t_bias.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
timeout 240 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "shortcut or (real_configs_on_cuda and not True)" > $OUT/t_dec.log 2>&1
grep -v "^DEBUG" $OUT/t_dec.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_compile.py -k "takes_the_levers and bfloat16" > $OUT/t_comp.log 2>&1
grep -v "^DEBUG" $OUT/t_comp.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
for model in wan2.2 wan2.1; do
  timeout 200 python3 benchmarks/bench_decode.py --models $model --dtypes bf16 --sizes 480x832 --compile-cases --separate-shortcut-biases --out /tmp/bd >> $OUT/bench.log 2>&1
  cp /tmp/bd/decode.json $OUT/decode_$model.json
done
grep -A5 "^variant\|not bit-exact\|slower than" $OUT/bench.log
