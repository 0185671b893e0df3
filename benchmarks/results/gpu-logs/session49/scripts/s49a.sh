#!/usr/bin/env bash
# session 49, command A: the autocast CUDA tests (autocast to the VAE's own dtype now takes the walk with autocast
# set aside; other autocast stock's modules), diffusers_code's tests under torch 2.11, the real configs' CUDA
# decodes with the code check, then Wan2.2 bf16 480x832 decoded under bf16 autocast (bench_decode.py --autocast).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short --durations=5"
timeout 200 $P -m cuda tests/test_autocast.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_autocast.log | tail -n 3
timeout 60 $P tests/test_diffusers_code.py 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_code.log | tail -n 1
timeout 120 $P tests/test_decoder.py -k real_configs_on_cuda 2>&1 | grep -v "^DEBUG" | tee $OUT/tests_real.log | tail -n 1
timeout 110 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases \
  --autocast --repeat 5 --out $OUT/autocast 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench_autocast.log | tail -n 6
