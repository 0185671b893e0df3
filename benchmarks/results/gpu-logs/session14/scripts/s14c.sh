#!/usr/bin/env bash
# session 14, command C: norm tiles (norm_tile): op and decoder CUDA tests; fp32 and fp16 kernel tiles (the old tile
# (64, 16, 4) is in the sweep)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
timeout 290 bash -c "$(declare -f pyt); pyt tests/test_rms_norm_cat_pad_5d.py -k 'cuda'" > $OUT/t_rms.log 2>&1 &
timeout 290 bash -c "$(declare -f pyt); pyt tests/test_decoder.py -k 'cuda and (non_default_switches or real_configs or channels_last_convs_on_cuda)'" > $OUT/t_decoder.log 2>&1 &
wait
tail -n 12 $OUT/t_rms.log; tail -n 12 $OUT/t_decoder.log
for dtype in fp32 fp16; do
  timeout 100 python3 benchmarks/decompose_norm_kernel.py --dtype $dtype --no-channel-norm > $OUT/decompose_$dtype.log 2>&1
  grep -E "kernel|tile \((64, 16, 4|32, 32, 2|32, 16, 2|64, 32, 4|64, 16, 2)\)" $OUT/decompose_$dtype.log
done
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
