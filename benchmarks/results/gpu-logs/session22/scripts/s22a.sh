#!/usr/bin/env bash
# session 22, command A: CUDA decoder and compile tests (bf16 torch.equal form, the refused upsampler's input); Wan2.2 bf16 720x1280 stock vs eager
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name --format=csv,noheader; python3 -c "import torch,triton;print(torch.__version__,triton.__version__,torch.backends.cudnn.version())"
timeout 250 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "cuda or refused" > $OUT/t_decoder.log 2>&1 &
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short -s tests/test_compile.py -k "cuda" > $OUT/t_compile.log 2>&1 &
wait
grep -v "^DEBUG" $OUT/t_decoder.log | grep -i "passed\|failed\|^E " | tail -n 12
grep -v "^DEBUG" $OUT/t_compile.log | grep -i "diff\|passed\|failed\|^E " | tail -n 12
timeout 290 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 720x1280 --compile-cases --out $OUT/bench > $OUT/bench.log 2>&1
grep -A6 "^variant" $OUT/bench.log; grep "conv run by\|not bit-exact\|slower\|refused" $OUT/bench.log | sort | uniq -c | head -20; tail -n 3 $OUT/bench.log
