#!/usr/bin/env bash
# session 38, command B (branch s37-grid3d checked out; .gpu/old.tar = main's tree, `git archive main --prefix=old/
# torch_wanops csrc_triton benchmarks tests`): the fused norm's launches and decodes, the branch (3-D grid and flat)
# against main.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o && tar xf .gpu/old.tar -C /tmp/o
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; } > $OUT/meta.txt 2>&1
PYTHONPATH=/tmp/site:$PWD timeout 100 python3 benchmarks/decompose_norm_kernel.py --model wan2.2 --no-channel-norm --no-tiles > $OUT/norm_branch.log 2>&1
(cd /tmp/o/old/.. && PYTHONPATH=/tmp/site:/tmp/o/old timeout 100 python3 old/benchmarks/decompose_norm_kernel.py --model wan2.2 --no-channel-norm --no-tiles) > $OUT/norm_main.log 2>&1
paste <(grep -v DEBUG $OUT/norm_main.log) <(grep -v DEBUG $OUT/norm_branch.log | awk '{print $(NF-3), $(NF-1)}') | cut -c1-160
PYTHONPATH=/tmp/site:$PWD timeout 300 python3 benchmarks/bench_decode.py --models wan2.2 wan2.1 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --flat-grid --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A6 "^variant"
cat $OUT/meta.txt
