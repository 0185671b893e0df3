#!/usr/bin/env bash
# session 27, command E: the shortcut path's condition now also asks whether torch has cuDNN (_CUDNN_BUILT):
# on this build it must (True), and the shortcut tests and the real configs' bf16 decodes must still pass.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch_wanops.decoder as d; print('cuDNN built:', d._CUDNN_BUILT)" 2>&1 | grep -v "^DEBUG"
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_decoder.py -k "shortcut or (real_configs_on_cuda and bfloat16 and not True)" > $OUT/t_dec.log 2>&1
grep -v "^DEBUG" $OUT/t_dec.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8
