#!/usr/bin/env bash
# session 56: the commands of C, D and E as run (A was session 55's landed_form.sh, B session 51's s51d.sh bench).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci PYTHONPATH=/tmp/site:$PWD
case "${1:-C}" in
C) TORCH_LOGS=output_code timeout 500 python3 benchmarks/profile_decode.py --model wan2.2 --dtype bf16 \
     --variants wanops-eager wanops-compiled --out $OUT 2> $OUT/stderr_output_code.log | tee $OUT/profile_compiled.log ;;
D) timeout 540 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -m cuda --durations=15 tests/test_compile.py \
     tests/test_decoder.py tests/test_autocast.py tests/test_latent_stage.py 2>&1 | grep -v "^DEBUG" \
     | tee $OUT/tests_cuda_after_import_fallbacks.log | tail -n 30 ;;
E) timeout 390 python3 -m pytest -v -p no:cacheprovider -rfE --tb=short -m cuda tests/test_decoder.py \
     tests/test_autocast.py tests/test_latent_stage.py 2>&1 | grep -v "^DEBUG" > $OUT/tests_cuda_decoder.log ;;
F) timeout 110 python3 -m pytest -q -p no:cacheprovider -rfE --tb=long -m cuda tests/test_decoder.py \
     -k "fused_upsample_keeps_the_bits and float32 and 2-wan2.1" 2>&1 | grep -v "^DEBUG" > $OUT/fused_upsample_fp32.log
   timeout 60 python3 benchmarks/results/gpu-logs/session56/scripts/upsample_verdicts.py ;;
esac
