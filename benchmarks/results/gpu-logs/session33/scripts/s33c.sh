#!/usr/bin/env bash
# session 33, command C: FUSED_DUP_UP3D_ADDS (Wan2.2's DupUp3D shortcuts added in the upsampler Conv2d's bias
# epilogue, bias_add_contiguous with DupUp3D factors). Wan2.2 bf16 480x832 side by side with stock and with the
# switch off (alone on the GPU), then the op tests, the decoder's, latent stage's and compile path's CUDA tests.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version --format=csv; git log --oneline -1; git status --short; } > $OUT/meta.txt 2>&1
timeout 150 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 480x832 --compile-cases --repeat 5 --separate-dup-up3d-adds --out $OUT/bench > $OUT/bench.log 2>&1; grep -v "^DEBUG" $OUT/bench.log | grep -A6 "^variant"
t=360
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k "separate-dup-up3d-adds" > /tmp/t_decoder_switch.log 2>&1 &
timeout $t python3 -m pytest -q -s -p no:cacheprovider -rfE --tb=short -k cuda tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_bias_add_contiguous.py tests/test_dup_up3d_add.py > /tmp/t_ops.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k cuda tests/test_compile.py > /tmp/t_compile.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; grep "verdicts" $f | head -3; tail -n 3 $f; done
