#!/usr/bin/env bash
# session 25, command A: the line-tiled kernels' flat grid (channel blocks fastest, then width blocks, then lines)
# against HEAD's line-major grid (.gpu/before = git archive 654a1d7), same cases, one process each; then the CUDA
# tests of the changed kernels (A's first try ran the compile tests too and cut the kernel tests at 300 s).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; python3 -c "import torch,triton;print(torch.__version__,triton.__version__,torch.backends.cudnn.version())"
for tree in before after; do
  root=$PWD; [ $tree = before ] && root=$PWD/.gpu/before
  PYTHONPATH=/tmp/site:$root timeout 150 python3 .gpu/s25grid.py > $OUT/grid_$tree.log 2>&1
done
paste <(cut -c1-62 $OUT/grid_before.log) <(cut -c45-62 $OUT/grid_after.log) | head -n 60
python3 - $OUT/grid_before.log $OUT/grid_after.log <<'PY'
import sys
b, a = (open(f).read().splitlines()[1:] for f in sys.argv[1:])
print("fingerprints equal:", all(x.split("]")[0].split("[")[1] == y.split("]")[0].split("[")[1] for x, y in zip(b, a) if "[" in x), len(b), len(a))
PY
for f in cat_pad_5d bias_add_contiguous rms_norm_cat_pad_5d upsample_nearest_2x; do
  timeout 280 python3 -m pytest -q -p no:cacheprovider -rfEs --tb=short tests/test_$f.py -k cuda > $OUT/t_$f.log 2>&1 &
done
wait
for f in cat_pad_5d bias_add_contiguous rms_norm_cat_pad_5d upsample_nearest_2x; do echo "== $f"; grep -v "^DEBUG" $OUT/t_$f.log | grep -i "passed\|failed\|^E \|timeout" | tail -n 8; done
