#!/usr/bin/env bash
# session 68 E: is session 68 D's slower Wan2.2 bf16 480x832 decode (1.000 s against session 51's 0.975 s, another
# H200) the code or the card? Session 51's code (50ff7cf, unpacked into old51/ by `git archive 50ff7cf torch_wanops
# csrc_triton benchmarks/bench_decode.py setup.py`, carried untracked) and today's, eager only, in turn on one card:
# old, new, old. Any card answers that (the decode is power-bound on an H100 too); it ran on an H100.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,driver_version --format=csv,noheader | tee $OUT/gpu.txt
run() {  # $1: label, $2: the code's root
  mkdir -p $OUT/$1
  (cd $2 && PYTHONPATH=/tmp/site:$PWD timeout 150 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 \
    --sizes 480x832 --compile-cases --repeat 5 --out $OUT/$1 2>&1 | grep -v "^DEBUG" | grep -v ": run [0-9]" \
    | tee $OUT/$1/bench.log | grep -E "^(diffusers|wanops)-eager  ")
}
run old51-a old51; run main $PWD; run old51-b old51
