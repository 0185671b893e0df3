#!/usr/bin/env bash
# session 40, command F (main + the runs_faster test's new margin, uncommitted): the decoder's four CUDA lists,
# test_latent_stage and test_reliability at once, as in s40b.sh (where the runs_faster test failed once), with the
# runs_faster tests looped eight more times beside them; then the norms under register caps 32 and 36 (the first
# norm's 40 registers hold it to 75% theoretical occupancy: ncu, session40/E). Tarred.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/r
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
export PYTHONPATH=/tmp/site:$PWD
for f in latent_stage reliability; do
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_$f.py > /tmp/t_$f.log 2>&1 &
done
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
sleep 20
for n in 1 2 3 4 5 6 7 8; do
  timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=line -k runs_faster tests/test_decoder.py 2>&1 \
    | grep -v "^DEBUG" | tail -n 1
done > /tmp/t_runs_faster_loop.log
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > /tmp/r/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
cat /tmp/t_runs_faster_loop.log
timeout 150 python3 benchmarks/decompose_norm_kernel.py --model wan2.2 --no-channel-norm --no-tiles --maxnreg 32 36 \
  2>&1 | grep -v "^DEBUG" > /tmp/r/norm_maxnreg.log
grep "kernel,\|maxnreg\|again\|plain" /tmp/r/norm_maxnreg.log
tar czf $OUT/s40f.tgz -C /tmp/r .
cat /tmp/r/meta.txt
