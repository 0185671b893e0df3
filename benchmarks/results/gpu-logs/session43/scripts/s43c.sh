#!/usr/bin/env bash
# session 43, command C (DupUp3D epilogue norms): the op's CUDA tests, the decoder's epilogue-norm and new switch
# tests, the decoder's four lists, the latent stage's; then interleaved_levers.py on Wan2.2 with the new lever row.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 250 $P -m cuda tests/test_bias_add_contiguous_norm.py > /tmp/t_op.log 2>&1 &
timeout 250 $P tests/test_decoder.py -k "epilogue_norms or aten-reduced-upsampler or fused_dup_up3d" > /tmp/t_dec_new.log 2>&1 &
timeout 250 $P -m cuda tests/test_latent_stage.py > /tmp/t_stage.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout 250 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
timeout 300 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 \
  --levers wanops-eager-aten-reduced-upsampler-outputs 2>&1 | grep -v "^DEBUG" | tee $OUT/interleaved_wan2.2.log | tail -n 12
