#!/usr/bin/env bash
# session 65 B: where the first Wan2.1 fp32 720x1280x81 decode's 129 s went (session 65 A), on any card: session
# 59's breakdown script (s59b_cold.py: an exclusive timer over Triton's compiles and loads, the profiler, each check)
# on that case, first with an empty Triton cache, then in a second process with the cache the first filled (what a
# restarted server pays per process).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD TRITON_CACHE_DIR=/tmp/tc65
rm -rf /tmp/tc65
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
sed -e 's/for model in ("wan2.2", "wan2.1"):/for model in ("wan2.1",):/' \
    -e 's/dtype="bf16", size="480x832"/dtype="fp32", size="720x1280"/' \
    benchmarks/results/gpu-logs/session59/scripts/s59b_cold.py > /tmp/s65b_first.py
grep -q '"fp32", size="720x1280"' /tmp/s65b_first.py && grep -q '("wan2.1",)' /tmp/s65b_first.py || exit 1
timeout 280 python3 /tmp/s65b_first.py 2>&1 | grep -v "^DEBUG" | tee $OUT/cold.log
timeout 170 python3 /tmp/s65b_first.py 2>&1 | grep -v "^DEBUG" | tee $OUT/warm_cache.log
