#!/usr/bin/env bash
# session 46, commands D and E: _runs_faster's stream test beside the decoder's four CUDA test lists, the
# condition of its one failure in A; D ran it five times 10 s apart (3c9eba4's test), E eight times 5 s apart
# (the matmul time that sizes its wait now the fastest of five).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/dec$g
  timeout 240 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
sleep 20
for i in 1 2 3 4 5 6 7 8; do
  timeout 60 $P tests/test_decoder.py -k hides_the_candidates 2>&1 | grep -v "^DEBUG" | tail -n 1
  sleep 5
done | tee $OUT/timing_test.log
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
