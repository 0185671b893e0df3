#!/usr/bin/env bash
# session 42, command C (branch s42-epilogue-norm): the new op's and x_norm's CUDA tests, the decoder's CUDA lists
# with the epilogue-norm tests and the latent stage at once; then Wan2.2 and Wan2.1 bf16 480x832 side by side with
# EPILOGUE_NORMS off as a lever row. Logs straight to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 280 $P -m cuda tests/test_bias_add_contiguous_norm.py tests/test_bias_add_contiguous.py > /tmp/t_ops.log 2>&1 &
timeout 280 $P tests/test_rms_norm_cat_pad_5d.py -k "x_norm or opcheck or real_decoder_sizes_on_cuda" > /tmp/t_rms.log 2>&1 &
timeout 280 $P -m cuda tests/test_cat_pad_5d.py tests/test_latent_stage.py > /tmp/t_catpad_stage.log 2>&1 &
timeout 280 $P tests/test_decoder.py -k "epilogue_norms or aten-reduced" > /tmp/t_dec_new.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout 280 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
timeout 250 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases \
  --repeat 7 --aten-reduced-block-outputs --out $OUT/bench 2>&1 | grep -v "^DEBUG" | tail -n 20 | tee $OUT/bench.log
