#!/usr/bin/env bash
# session 30, command A: the latent-stage batching probe (s30a.py), then every CUDA test of the decoder, the
# compile path, reliability, conv3d_chunked, channels_last_copy and wan_rms_norm on HEAD, in parallel processes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
git log --oneline -1 > $OUT/commit.txt
timeout 150 python3 .gpu/s30a.py 2>&1 | grep -v "^DEBUG" > $OUT/batching.log; cat $OUT/batching.log | grep -v "kernels:"
t=400
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > $OUT/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_compile.py > $OUT/t_compile.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_reliability.py > $OUT/t_reliability.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_conv3d_chunked.py tests/test_channels_last_copy.py tests/test_wan_rms_norm.py > $OUT/t_conv_clc_rms.log 2>&1 &
wait
for f in $OUT/t_*.log; do echo "== $f"; tail -n 4 $f; done
