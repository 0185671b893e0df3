#!/usr/bin/env bash
# session 37, command D (final tree: the PTX arithmetic reverted, session 36's kernels): every CUDA test (-m cuda) of
# the op files other than rms_norm_cat_pad_5d (all of whose CUDA tests ran in A), with the latent stage and the
# compile path: the @cuda tests without "cuda" in their names (>2**31 elements, many width blocks, other devices,
# conv3d_chunked's tail-tile property test) had not run since session 35. One process per file, in parallel.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
for f in cat_pad_5d dup_up3d_add bias_add_contiguous upsample_nearest_2x conv3d_chunked channels_last_copy wan_rms_norm latent_stage compile; do
  timeout 470 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short --durations=5 -m cuda tests/test_$f.py > /tmp/t_$f.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; grep -E "passed|failed|error" $f | tail -n 2; done
cat $OUT/meta.txt
