#!/usr/bin/env bash
# session 63 A, on any card: the CUDA lists of the two ops whose launchers changed (bias_add_contiguous_kernel's
# LINES constexpr and num_lines argument, lines_per_program capped by a launch's lines; the GPU launch is LINES=1,
# whose sm_90 PTX compare_ptx.py found the same under triton 3.9), then the decoder's real-config decodes.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a $OUT/gpu.txt
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 280 $P -m cuda tests/test_bias_add_contiguous.py tests/test_bias_add_contiguous_norm.py 2>&1 \
  | grep -v "^DEBUG" > $OUT/bias_add.log &
timeout 280 $P -m cuda tests/test_cat_pad_5d.py 2>&1 | grep -v "^DEBUG" > $OUT/cat_pad_5d.log &
wait
tail -n 2 $OUT/bias_add.log $OUT/cat_pad_5d.log
timeout 250 $P tests/test_decoder.py -k "real_configs_on_cuda" 2>&1 | grep -v "^DEBUG" | tee $OUT/decoder.log \
  | tail -n 2
