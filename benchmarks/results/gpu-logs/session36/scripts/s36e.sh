#!/usr/bin/env bash
# session 36, command E: the op test files' CUDA tests on the final tree (their checks and int64 test changed):
# rms_norm_cat_pad_5d in six shards, cat_pad_5d, bias_add_contiguous, dup_up3d_add, upsample_nearest_2x,
# conv3d_chunked with wan_rms_norm, and the compile path, all in parallel.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
t=420
for s in .gpu/s36_rms0*; do
  mapfile -t ids < $s
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_rms_${s##*rms}.log 2>&1 &
done
for f in cat_pad_5d bias_add_contiguous dup_up3d_add upsample_nearest_2x; do
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_$f.py > /tmp/t_$f.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_conv3d_chunked.py tests/test_wan_rms_norm.py > /tmp/t_conv_wan_rms.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_compile.py > /tmp/t_compile.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 3 $f; done
cat $OUT/meta.txt
