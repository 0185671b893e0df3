#!/usr/bin/env bash
# session 41, command B (main d17c4a2): the decoder's four CUDA lists, test_latent_stage and test_reliability at once,
# the runs_faster tests looped beside them for 300 s, then twice alone (session 40's item 1, on the landed
# _runs_faster); then the graph probe's timelines (eager and graphed, Wan2.2 bf16 480x832). Logs straight to $OUT.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
rm -f /tmp/t_*.log
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
export PYTHONPATH=/tmp/site:$PWD
for f in latent_stage reliability; do
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_$f.py > /tmp/t_$f.log 2>&1 &
done
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
sleep 15
end=$((SECONDS + 300))
while [ $SECONDS -lt $end ]; do
  timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=line -k runs_faster tests/test_decoder.py 2>&1 \
    | grep -v "^DEBUG" | tail -n 1
done > /tmp/t_runs_faster_busy.log
wait
for n in 1 2; do
  timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=line -k runs_faster tests/test_decoder.py 2>&1 \
    | grep -v "^DEBUG" | tail -n 1
done > /tmp/t_runs_faster_alone.log
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
cat /tmp/t_runs_faster_busy.log /tmp/t_runs_faster_alone.log
timeout 150 python3 .gpu/s41_graph_probe.py --model wan2.2 --repeats 3 --profile 2>&1 | grep -v "^DEBUG" | tee $OUT/graph22_profile.log

