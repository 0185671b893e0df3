#!/usr/bin/env bash
# session 12, command C: bf16 480x832 Wan2.1, session 10's code (5eec494) then HEAD, one after the other; the tail of the decoder CUDA tests
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
for round in 1 2; do
  (cd .gpu/old && PYTHONPATH=/tmp/site:$PWD timeout 100 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 \
      --compile-cases --out $OUT/old$round > $OUT/old$round.log 2>&1)
  PYTHONPATH=/tmp/site:$PWD timeout 100 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes bf16 --sizes 480x832 \
      --compile-cases --out $OUT/new$round > $OUT/new$round.log 2>&1
done
export PYTHONPATH=/tmp/site:$PWD
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py \
    -k "cuda and (non_default_switches or frame_major_norms_in_stock_layout or check_waits or requires_the_same)" > $OUT/t_tail.log 2>&1
for f in old1 new1 old2 new2; do echo $f; grep -h -A4 "^variant" $OUT/$f.log | tail -2; done; tail -n 5 $OUT/t_tail.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
