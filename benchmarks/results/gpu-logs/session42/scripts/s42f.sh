#!/usr/bin/env bash
# session 42, command F (branch s42-epilogue-norm): benchmarks/interleaved_levers.py, EPILOGUE_NORMS off as the
# lever row, Wan2.2 then Wan2.1 bf16 480x832x81. Logs straight to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
for m in wan2.2 wan2.1; do
  timeout 190 python3 benchmarks/interleaved_levers.py --model $m --rounds 7 \
    --levers wanops-eager-aten-reduced-block-outputs 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_$m.log
done
