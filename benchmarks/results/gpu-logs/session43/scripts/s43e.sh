#!/usr/bin/env bash
# session 43, command E (the DupUp3D norm epilogue on 64 columns x 4 warps): the op's CUDA tests and the decoder's
# epilogue-norm tests, then interleaved_levers.py on Wan2.2 with the new lever row, 9 rounds.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 200 $P -m cuda tests/test_bias_add_contiguous_norm.py > /tmp/t_op.log 2>&1 &
timeout 200 $P tests/test_decoder.py -k "epilogue_norms_on_cuda or aten-reduced-upsampler" > /tmp/t_dec_new.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
timeout 330 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 9 \
  --levers wanops-eager-aten-reduced-upsampler-outputs 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_wan2.2.log | tail -n 12
