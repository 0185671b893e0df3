#!/usr/bin/env bash
# session 23, command A: the CUDA compile tests (incl. the real configs at 480x832 latents) and the decoder subsets; Wan2.1 bf16 480x832 stock, eager, compiled side by side
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch,triton;print(torch.__version__,triton.__version__,torch.backends.cudnn.version())"
timeout 280 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short -s tests/test_compile.py -k "cuda and not real_config" > $OUT/t_compile.log 2>&1 &
timeout 280 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_compile.py -k "real_config_bf16_decode_gives_stock_bits_on_cuda" > $OUT/t_compile_real.log 2>&1 &
timeout 280 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "cuda or refused or fused_upsample or norms_outside or takes_the_layout" > $OUT/t_decoder.log 2>&1 &
wait
for f in t_compile t_compile_real t_decoder; do grep -v "^DEBUG" $OUT/$f.log | grep -i "diff\|passed\|failed\|^E \|timeout" | tail -n 12; done
timeout 280 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases bf16:480x832 --out $OUT/bench > $OUT/bench.log 2>&1
grep -A8 "^variant" $OUT/bench.log; grep -c "compiled call failed" $OUT/bench.log; tail -n 2 $OUT/bench.log
