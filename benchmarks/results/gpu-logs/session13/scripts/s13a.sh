#!/usr/bin/env bash
# session 13, command A: ATen's channel-norm order; profiles of the current code (bf16 both models, fp32 Wan2.1);
# memory of a later fp32 decode with fp32 on the conv-layout lever
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
timeout 150 python3 benchmarks/probe_reduction_order.py > $OUT/probe_reduction_order.log 2>&1
cat $OUT/probe_reduction_order.log
timeout 100 python3 benchmarks/profile_decode.py --model wan2.1 --dtype bf16 --variants wanops-eager --out $OUT > $OUT/profile_wan2.1_bf16.log 2>&1
timeout 100 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 --variants wanops-eager --out $OUT > $OUT/profile_wan2.2_bf16.log 2>&1
timeout 100 python3 benchmarks/profile_decode.py --model wan2.1 --dtype fp32 --variants wanops-eager --out $OUT > $OUT/profile_wan2.1_fp32.log 2>&1
timeout 100 python3 benchmarks/memory_decode.py --model wan2.1 --dtype fp32 --variants wanops-eager --out $OUT > $OUT/mem_fp32.log 2>&1
for f in $OUT/profile_*.log; do echo "== $f"; head -n 45 $f; done
cat $OUT/mem_fp32.log | head -30
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
