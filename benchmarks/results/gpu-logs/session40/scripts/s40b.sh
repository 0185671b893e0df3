#!/usr/bin/env bash
# session 40, command B (branch s39-first-chunk-interleave checked out, which holds s39-first-chunk-order; .gpu/old.tar
# = main's tree as in s40a.sh, .gpu/order.tar = `git archive s39-first-chunk-order --prefix=order/ torch_wanops
# csrc_triton benchmarks tests`): the decoder's CUDA test lists, test_latent_stage and test_reliability on CUDA, then
# Wan2.2's idle time on the GPU with the branch, s39-first-chunk-order and main. Tarred. Decodes: s40c.sh.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o /tmp/r && tar xf .gpu/old.tar -C /tmp/o && tar xf .gpu/order.tar -C /tmp/o
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > /tmp/r/meta.txt 2>&1
export PYTHONPATH=/tmp/site:$PWD
for f in latent_stage reliability; do
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda tests/test_$f.py > /tmp/t_$f.log 2>&1 &
done
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout 330 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > /tmp/r/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
unset PYTHONPATH
idle() { (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 120 python3 benchmarks/idle_gaps.py --model wan2.2 --variants wanops-eager \
  --repeats 5 --top 3) 2>&1 | grep -v "^DEBUG" > /tmp/r/idle_$2.log; echo "== $2"; cat /tmp/r/idle_$2.log | head -30; }
idle $PWD interleave; idle /tmp/o/order order; idle /tmp/o/old main
tar czf $OUT/s40b.tgz -C /tmp/r .
cat /tmp/r/meta.txt
