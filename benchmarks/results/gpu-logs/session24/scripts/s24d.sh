#!/usr/bin/env bash
# session 24, command D: the fp32 compiled CUDA difference (inductor only, wan2.1-tiny) with Triton's division rounded as eager's, without FTZ, and with cuDNN's TF32 off
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 DIAG_BACKENDS=inductor
f() { timeout 120 python3 .gpu/s24diag.py wan2.1-tiny 2>&1 | grep -v "^DEBUG\|Warning\|warn" > $OUT/diag_$1.log; }
TORCHINDUCTOR_EMULATE_DIVISION_ROUNDING=1 f div &
TORCHINDUCTOR_EMULATE_DIVISION_ROUNDING=1 DIAG_NO_FTZ=1 f div_noftz &
DIAG_TF32=0 f notf32 &
TORCHINDUCTOR_EMULATE_DIVISION_ROUNDING=1 DIAG_NO_FTZ=1 DIAG_TF32=0 f all &
wait
for n in div div_noftz notf32 all; do echo "== $n"; tail -n 6 $OUT/diag_$n.log; done
