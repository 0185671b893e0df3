#!/usr/bin/env bash
# session 64 A, on any card: the CUDA tests that decode the tiny configs, after they lost one residual block per up
# block (num_res_blocks=1), in four processes side by side (the real configs, unchanged, and the GPU-time
# comparisons, which other processes would disturb, left out).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" | tee -a $OUT/gpu.txt
P="timeout 540 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda"
SKIP="not real_config and not runs_faster"
SWITCHES="non_default_switches or frame_major_norms_in_stock_layout"
$P tests/test_decoder.py -k "$SKIP and ($SWITCHES)" 2>&1 | grep -v "^DEBUG" > $OUT/decoder_switches.log &
$P tests/test_decoder.py -k "$SKIP and not ($SWITCHES)" 2>&1 | grep -v "^DEBUG" > $OUT/decoder_rest.log &
$P tests/test_autocast.py tests/test_latent_stage.py -k "$SKIP" 2>&1 | grep -v "^DEBUG" > $OUT/autocast_stage.log &
$P tests/test_compile.py tests/test_reliability.py tests/test_memory_estimate.py -k "$SKIP" 2>&1 \
  | grep -v "^DEBUG" > $OUT/compile_reliability_memory.log &
wait
tail -n 1 $OUT/*.log
