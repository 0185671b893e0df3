#!/usr/bin/env bash
# session 21, command A: Wan2.2 bf16/fp32 720x1280 stock vs eager (current code), a profile of the bf16 cell, CUDA compile tests
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name --format=csv,noheader; python3 -c "import torch,triton;print(torch.__version__,triton.__version__,torch.backends.cudnn.version())"
timeout 300 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 fp32 --sizes 720x1280 --compile-cases --out $OUT/bench > $OUT/bench.log 2>&1
grep -A6 "^variant" $OUT/bench.log; grep "conv run by\|not bit-exact\|slower" $OUT/bench.log | sort | uniq -c | head -20
timeout 120 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --size 720x1280 --variants wanops-eager --out $OUT/prof > $OUT/prof.log 2>&1
head -n 32 $OUT/prof.log
timeout 150 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short -s tests/test_compile.py -k "cuda" > $OUT/t_compile.log 2>&1
grep -i "diff\|passed\|failed" $OUT/t_compile.log | grep -v "^DEBUG" | tail -n 12
