#!/usr/bin/env bash
# session 38, command C (branch s37-grid3d checked out, .gpu/old.tar = main): the branch's norm launches on its flat
# grid (GRID_YZ_LIMIT = 0); Wan2.2 and Wan2.1 bf16 480x832 decodes, branch and main alternating in one run; then
# Nsight Compute's norm set (run_on_gpu.sh ncu-norm) on the branch.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o && tar xf .gpu/old.tar -C /tmp/o
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 100 python3 -c "
import runpy, sys, torch_wanops._backend as b
b.GRID_YZ_LIMIT = 0
sys.argv = ['decompose_norm_kernel.py', '--model', 'wan2.2', '--no-channel-norm', '--no-tiles']
runpy.run_path('benchmarks/decompose_norm_kernel.py', run_name='__main__')" > $OUT/norm_branch_flat.log 2>&1
grep -v DEBUG $OUT/norm_branch_flat.log | grep "kernel,\|plain copy" | cut -c1-120
bench() {  # bench TREE MODEL TAG
  (cd $1 && PYTHONPATH=/tmp/site:$1 timeout 150 python3 benchmarks/bench_decode.py --models $2 --dtypes bf16 \
    --sizes 480x832 --compile-cases --repeat 7 --out $OUT/$3) > $OUT/$3.log 2>&1
  echo "== $3"; grep -v "^DEBUG" $OUT/$3.log | grep -A4 "^variant" | grep "eager"
}
for round in 1 2; do
  bench $PWD wan2.2 branch22_$round; bench /tmp/o/old wan2.2 main22_$round
done
bench $PWD wan2.1 branch21; bench /tmp/o/old wan2.1 main21
PYTHONPATH=/tmp/site:$PWD OUT=$OUT timeout 200 bash benchmarks/run_on_gpu.sh ncu-norm > $OUT/ncu.log 2>&1; tail -n 40 $OUT/ncu.log
cat $OUT/meta.txt
