#!/usr/bin/env bash
# session 51, command A: session 50's change (every op tagged needs_exact_strides; DupUp3DShortcut.added_to naming
# its fields) on the GPU: the fused norm's and cat_pad_5d's CUDA tests, then bench_decode.py's interleaved timing of
# both architectures at bf16 480x832 (medians of 7), on whichever card the session was lent.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,memory.total,driver_version --format=csv > $OUT/meta.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())" >> $OUT/meta.txt
timeout 200 $P -m cuda tests/test_rms_norm_cat_pad_5d.py tests/test_cat_pad_5d.py tests/test_wan_rms_norm.py 2>&1 \
  | grep -v "^DEBUG" | tee $OUT/tests_ops.log | tail -n 1
timeout 330 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 7 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench.log | tail -n 12
