#!/usr/bin/env bash
# session 13, command E: the rest of the decoder's CUDA tests and the reliability tests with RAW_CONV_OUTPUT_NORMS on
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
timeout 420 bash -c "$(declare -f pyt); pyt tests/test_decoder.py -k 'cuda and not (non_default_switches or real_configs or channels_last_convs_on_cuda)'" > $OUT/t_decoder_rest.log 2>&1 &
timeout 420 bash -c "$(declare -f pyt); pyt tests/test_reliability.py" > $OUT/t_reliability.log 2>&1 &
wait
tail -n 8 $OUT/t_decoder_rest.log; tail -n 8 $OUT/t_reliability.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
