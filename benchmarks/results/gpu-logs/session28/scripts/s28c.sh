#!/usr/bin/env bash
# session 28, command C: Triton's value specialisation dropped for the kernels' line and grid sizes (working tree)
# against 3cdb78c's kernels (.gpu/base): every compile of a cold first decode (s28b.py, each with its own empty
# cache), then decode medians side by side with stock, each version in its own process with its cache filled.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1
for v in base new; do
  src=$PWD; [ $v = base ] && src=$PWD/.gpu/base
  rm -rf /tmp/tc-$v
  PYTHONPATH=/tmp/site:$src TRITON_CACHE_DIR=/tmp/tc-$v timeout 150 python3 .gpu/s28b.py 2>&1 | grep -v "^DEBUG" > $OUT/compiles_$v.log
  echo "== $v"; grep "decode\|variants" $OUT/compiles_$v.log | head -40
done
for rep in 1; do for v in base new; do
  src=$PWD; [ $v = base ] && src=$PWD/.gpu/base
  PYTHONPATH=/tmp/site:$src TRITON_CACHE_DIR=/tmp/tc-$v timeout 150 python3 $src/benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 3 --out /tmp/bd-$v-$rep > $OUT/bench_${v}_$rep.log 2>&1
  echo "== $v $rep"; grep -B1 -A3 "^variant" $OUT/bench_${v}_$rep.log | grep -v "^--\|^variant"
done; done
