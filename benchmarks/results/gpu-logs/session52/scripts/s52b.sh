#!/usr/bin/env bash
# session 52, prepared without a GPU, not run: the energy of its two prepared levers, applied from their diffs
# (apply_prepared.sh), at Wan2.2 bf16 480x832: interleaved_levers, 7 rounds, the three switch-off rows and stock,
# the J column (session 49's noise floor ~2.3 J over 7 rounds; 1.85x needs ~12 J); then idle_gaps with and without
# the zero-frame taps: a first chunk with a third of its conv work may leave the GPU waiting on the CPU at the
# decode's start (5.5 ms idle there already, session 49 C). Run after s52a.sh, on the same warm machine.
# Needs .whl carried: run(carry=[".whl"]).
set -o pipefail
bash benchmarks/results/gpu-logs/session52/scripts/apply_prepared.sh | tee $OUT/apply.log || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD
timeout 400 python3 benchmarks/interleaved_levers.py --model wan2.2 --rounds 7 --levers wanops-eager-ieee-division-norms \
  wanops-eager-loaded-silu-table wanops-eager-whole-first-chunk-convs 2>&1 | grep -v "^DEBUG" \
  | tee $OUT/interleaved.log | tail -n 14
timeout 150 python3 benchmarks/idle_gaps.py --model wan2.2 --variants wanops-eager wanops-eager-whole-first-chunk-convs \
  --top 5 2>&1 | grep -v "^DEBUG" | tee $OUT/idle_gaps.log | grep -E "plain|idle"
