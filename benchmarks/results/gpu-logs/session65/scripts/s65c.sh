#!/usr/bin/env bash
# session 65 C: which Triton kernels B's cold first Wan2.1 fp32 720x1280x81 decode compiled (80 compiles, 158.7 s):
# session 59's s59d_compiles.py (each compile's kernel, seconds, constexprs and specialization) on that case.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc65c
rm -rf /tmp/tc65c
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
sed -e 's/for model in ("wan2.2", "wan2.1"):/for model in ("wan2.1",):/' \
    -e 's/dtype="bf16", size="480x832"/dtype="fp32", size="720x1280"/' \
    benchmarks/results/gpu-logs/session59/scripts/s59d_compiles.py > /tmp/s65c_compiles.py
grep -q '"fp32", size="720x1280"' /tmp/s65c_compiles.py && grep -q '("wan2.1",)' /tmp/s65c_compiles.py || exit 1
timeout 280 python3 /tmp/s65c_compiles.py 2>&1 | grep -v "^DEBUG" | tee $OUT/compiles.log | tail -n 30
