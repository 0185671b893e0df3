#!/usr/bin/env bash
# Prepared in session 55, not run: the landed form of the ops' Inductor fallbacks (registered at import) on CUDA.
# compile_times.py at 9 frames (expect both graphs in ~20 s, where A never finished the first), then the compiled
# real decoders' exactness at 480x832 (Wan2.2's had the same slow compile). One command (~300 s on a warm machine).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader
python3 -m torch_wanops --device cuda info | sed -n '/Inductor lowerings/,+1p'
timeout 150 python3 benchmarks/results/gpu-logs/session54/scripts/compile_times.py --model wan2.2 --frames 9 \
  --decodes 3 2>&1 | grep -v "^DEBUG" | tee $OUT/compile_times.log | head -20
timeout 300 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_compile.py \
  tests/test_inductor_fallbacks.py -k "real_config_16_bit or inductor_fallbacks" 2>&1 | grep -v "^DEBUG" | tee $OUT/test_compile_cuda.log | tail -n 3
