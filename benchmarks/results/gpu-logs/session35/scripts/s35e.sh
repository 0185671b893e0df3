#!/usr/bin/env bash
# session 35, command E: conv_in and the time convs through the conv-layout lever (CHANNELS_LAST_UNNORMED_CONVS,
# cat_pad_5d's channels_last output): cat_pad_5d's channels-last CUDA tests, the decoder's four CUDA lists, the switch
# off in whole decodes, the latent stage's and the compile path's CUDA tests in parallel; then Wan2.2 and Wan2.1 bf16
# 480x832 side by side with the switch off.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
t=330
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k "stock-layout-unnormed-convs" > /tmp/t_decoder_switch.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_compile.py > /tmp/t_compile.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_cat_pad_5d.py -k "(cuda and into) or opcheck" > /tmp/t_cat_pad.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 2 $f; done
timeout 200 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --stock-layout-unnormed-convs --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A6 "^variant"
cat $OUT/meta.txt
