#!/usr/bin/env bash
# session 43, command A (main): session 42's item 0 (the epilogue-norm CUDA test, now also under inference_mode, and
# the decoder's four CUDA lists), item 1 (s43_dupnorm.py at Wan2.2's DupUp3D launches), then a Wan2.2 profile with
# a longer op table (what the 'other' kernels serve). Logs straight to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 250 $P tests/test_decoder.py -k "epilogue_norms" > /tmp/t_dec_new.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout 250 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
timeout 110 python3 .gpu/s43_dupnorm.py 2>&1 | grep -v "^DEBUG" | tee $OUT/dupnorm.log
timeout 150 python3 benchmarks/profile_decode.py --model wan2.2 --variants wanops-eager --top 90 --out $OUT 2>&1 \
  | grep -v "^DEBUG" | tail -n 5
