#!/usr/bin/env bash
# session 25, command B: the norm kernel skipping its arithmetic on lines without new frames (after), against
# HEAD (before) and the flat grid alone (mid); the CUDA tests of the kernel; the real configs compiled in fp16
# (GRAPHS_GIVING_STOCK_BITS now holds CUDA fp16); Wan2.1 fp32 720x1280 side by side.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
for tree in before mid after; do
  root=$PWD; [ $tree != after ] && root=$PWD/.gpu/$tree
  PYTHONPATH=/tmp/site:$root timeout 120 python3 .gpu/s25grid.py > $OUT/grid_$tree.log 2>&1
done
paste <(cut -c1-62 $OUT/grid_before.log) <(cut -c45-62 $OUT/grid_mid.log) <(cut -c45-62 $OUT/grid_after.log) | grep "^norm\|^copy" | head -n 40
python3 - $OUT/grid_before.log $OUT/grid_mid.log $OUT/grid_after.log <<'PY'
import sys
logs = [[l.split("[")[1] for l in open(f).read().splitlines()[1:] if "[" in l] for f in sys.argv[1:]]
print("fingerprints equal:", logs[0] == logs[1] == logs[2], [len(l) for l in logs])
PY
for f in cat_pad_5d rms_norm_cat_pad_5d upsample_nearest_2x; do
  timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_$f.py -k cuda > $OUT/t_$f.log 2>&1 &
done
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_compile.py -k "real_config and float16" > $OUT/t_compile_real_fp16.log 2>&1 &
wait
for f in cat_pad_5d rms_norm_cat_pad_5d upsample_nearest_2x compile_real_fp16; do echo "== $f"; grep -v "^DEBUG" $OUT/t_$f.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8; done
timeout 260 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 720x1280 --out $OUT/bench720 > $OUT/bench720.log 2>&1
grep -A6 "^variant" $OUT/bench720.log; tail -n 3 $OUT/bench720.log
