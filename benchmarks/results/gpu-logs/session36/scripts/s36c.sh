#!/usr/bin/env bash
# session 36, command C: the weight copies only where ATen's conv takes its input as channels-last: the random-shape
# fp32 loop that found it (every step), reliability, the channels_last_copy CUDA tests, the decoder's four CUDA lists
# and the latent stage's CUDA tests in parallel.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
t=330
timeout $t python3 .gpu/s36_rel.py $PWD > /tmp/t_rel_loop.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k "cuda or below_autograd" tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_reliability.py > /tmp/t_reliability.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_channels_last_copy.py > /tmp/t_copy.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 2 $f; done
cat $OUT/meta.txt
