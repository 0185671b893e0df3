#!/usr/bin/env bash
# session 37, command E: what bounds the fused norm now that fewer instructions did not speed it up (B, C): ncu of
# one Wan2.2 bf16 launch's norm (first: NCDHW x, second: raw channels-last x + bias) and of the same launch's copy.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
which ncu
timeout 200 ncu --clock-control none --kernel-name cat_pad_5d_kernel --launch-skip 0 --launch-count 8 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats python3 .gpu/s37e_ncu.py > $OUT/ncu.log 2>&1
grep -E "cat_pad_5d_kernel|Duration|DRAM Throughput|Compute \(SM\)|Issued Warp Per|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|stalled|Stall" $OUT/ncu.log | cut -c1-300
cat $OUT/meta.txt
