#!/usr/bin/env bash
# session 44, command D (summation_orders in the conv-layout check): the decoder's CUDA lists (switch rows apart),
# the new 720p Conv2d test, reliability; bench_decode.py's Wan2.2 bf16 720x1280 cell (medians of 3), then Wan2.1's.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
rm -f /tmp/t_*.log
P="python3 -m pytest -q -p no:cacheprovider -rfE --tb=short"
timeout 230 $P tests/test_decoder.py -k "720p" > /tmp/t_new.log 2>&1 &
timeout 230 $P -m cuda tests/test_reliability.py > /tmp/t_rel.log 2>&1 &
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/dec$g
  timeout 230 $P "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 1 $f; done
cp benchmarks/results/decode.json $OUT/
for m in wan2.2 wan2.1; do
  timeout 170 python3 benchmarks/bench_decode.py --models $m --dtypes bf16 --sizes 720x1280 --compile-cases \
    --repeat 3 --out $OUT 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" | tee $OUT/bench_$m.log | tail -n 7
done
