#!/usr/bin/env bash
# session 40, command G (main + _runs_faster's runs taken in turn, uncommitted): the two runs_faster tests ten times
# while three other processes keep the GPU busy (matmul loops with CPU pauses), then once alone. Tarred.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
mkdir -p /tmp/r
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
for p in 1 2 3; do
  timeout 80 python3 -c "
import time, torch
x = torch.randn(4096, 4096, device='cuda')
end = time.time() + 70
while time.time() < end:
    for _ in range($p * 3):
        x = (x @ x) / 64
    torch.cuda.synchronize()
    time.sleep(0.002 * $p)
" &
done
sleep 8
for n in $(seq 10); do
  timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k runs_faster tests/test_decoder.py 2>&1 \
    | grep -v "^DEBUG" | grep "passed\|failed\|FAILED\|assert"
done | tee /tmp/r/runs_faster_busy.log
wait
timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k runs_faster tests/test_decoder.py 2>&1 \
  | grep -v "^DEBUG" | tail -n 2 | tee /tmp/r/runs_faster_alone.log
tar czf $OUT/s40g.tgz -C /tmp/r .
