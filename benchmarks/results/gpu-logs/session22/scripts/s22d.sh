#!/usr/bin/env bash
# session 22, command D: where the compiled bf16 decode still leaves stock's bits: aot_eager vs inductor per chunk (Wan2.1, 3x60x104 latents), Inductor's generated code kept
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
timeout 200 python3 .gpu/s22diag2.py aot_eager > $OUT/diag_aot_eager.log 2>&1
grep -v "^DEBUG" $OUT/diag_aot_eager.log | grep "graphs\|chunk\|Error" | head
TORCH_LOGS=output_code timeout 250 python3 .gpu/s22diag2.py inductor > $OUT/diag_inductor.log 2> $OUT/inductor_output_code.log
grep -v "^DEBUG" $OUT/diag_inductor.log | grep "graphs\|chunk\|Error" | head
grep -c "@triton.jit" $OUT/inductor_output_code.log
