#!/usr/bin/env bash
# session 20, command C: Inductor's generated kernels in a compiled tiny decode; Wan2.1 fp32 720x1280 eager (runs_faster over 4 calls)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
TORCH_LOGS=output_code timeout 120 python3 .gpu/s20diag2.py > $OUT/diag2.log 2>&1
grep -E "^# Source node|Source Nodes|^def triton_|torch.float32 (True|False)" $OUT/diag2.log | sort | uniq -c | sort -rn | head -n 40
timeout 330 python3 benchmarks/bench_decode.py --models wan2.1 --dtypes fp32 --sizes 720x1280 --out $OUT/bench720 > $OUT/bench720.log 2>&1
grep -A6 "^variant" $OUT/bench720.log; tail -n 3 $OUT/bench720.log
