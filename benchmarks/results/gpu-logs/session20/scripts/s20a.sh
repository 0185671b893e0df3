#!/usr/bin/env bash
# session 20, command A: exact compiled path, attention norm via the op, _runs_faster over 4 calls: CUDA tests, Wan2.1 bf16 480x832 eager + compiled
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), torch.backends.cudnn.version())"
timeout 230 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_compile.py -k "cuda or take_the_eager" > $OUT/t_compile.log 2>&1 &
timeout 230 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "attention or runs_faster" > $OUT/t_decoder.log 2>&1 &
wait
tail -n 8 $OUT/t_compile.log; tail -n 8 $OUT/t_decoder.log
timeout 330 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; tail -n 4 $OUT/bench.log
