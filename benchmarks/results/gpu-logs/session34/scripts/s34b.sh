#!/usr/bin/env bash
# session 34, command B: the block split's whole-decode tests: the decoder's four CUDA lists, BLOCK_SPLIT_NORMS off
# in whole decodes, the latent stage's and the compile path's CUDA tests; the raw-output/kernel-verdict log lines.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
t=400
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k "unsplit-kernel-norms" > /tmp/t_decoder_switch.log 2>&1 &
timeout $t python3 -m pytest -q -s -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_compile.py > /tmp/t_compile.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 3 $f; done
cat $OUT/meta.txt
