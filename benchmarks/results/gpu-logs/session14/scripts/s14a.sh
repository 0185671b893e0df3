#!/usr/bin/env bash
# session 14, command A: the fused norm kernel decomposed (stages left out or replaced, tiles, shared reciprocal),
# exhaustive check of the shared-reciprocal division, channel_norm tiles; ncu of the two 96ch launches
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 330 python3 benchmarks/decompose_norm_kernel.py --exhaustive > $OUT/decompose.log 2>&1
cat $OUT/decompose.log
which ncu
timeout 150 ncu --clock-control none --kernel-name cat_pad_5d_kernel --launch-skip 1 --launch-count 3 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats python3 .gpu/ncu_norm.py > $OUT/ncu.log 2>&1
tail -c 9000 $OUT/ncu.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
