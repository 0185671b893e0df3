#!/usr/bin/env bash
# session 40, command E (main checked out): the runs_faster CPU-launch test alone on the GPU three times (it failed
# once in s40b beside five other pytest processes), fresh profiles of both models (s40d.sh), then ncu-norm. Tarred.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:$PWD HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/r
for n in 1 2 3; do
  timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE --tb=line \
    "tests/test_decoder.py::test_runs_faster_hides_the_candidates_cpu_launch_behind_its_previous_call" \
    "tests/test_decoder.py::test_runs_faster_compares_gpu_times" 2>&1 | grep -v "^DEBUG" | tail -n 2
done | tee /tmp/r/runs_faster.log
OUT=/tmp/r bash .gpu/s40d.sh > /tmp/r/profile.log 2>&1; tail -n 12 /tmp/r/profile.log
OUT=/tmp/r timeout 240 bash benchmarks/run_on_gpu.sh ncu-norm 2>&1 | grep -v "^DEBUG" | tail -n 40
rm -f /tmp/r/ncu_norm.ncu-rep.tmp; ls -la /tmp/r /tmp/r/profile
tar czf $OUT/s40e.tgz -C /tmp/r .
