#!/usr/bin/env bash
# session 12, command D: racecheck over rms_norm_cat_pad_5d's real-size bf16 CUDA tests (all 64, 4 shards at once); its >2**31 test
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
f=tests/test_rms_norm_cat_pad_5d.py
python3 -m pytest -q -p no:cacheprovider --collect-only $f -k "real_decoder_sizes and bfloat16" | grep "::" > $OUT/ids.txt
wc -l < $OUT/ids.txt
split -n r/4 -d $OUT/ids.txt $OUT/shard_
for s in $OUT/shard_0*; do
  (mapfile -t ids < $s; timeout 300 compute-sanitizer --tool racecheck --error-exitcode 1 python3 -m pytest -q -p no:cacheprovider "${ids[@]}" \
      > $OUT/racecheck_$(basename $s).log 2>&1; echo "rc=$?" >> $OUT/racecheck_$(basename $s).log) &
done
timeout 200 python3 -m pytest -q -p no:cacheprovider -rfE --tb=short $f -k "beyond_2_pow_31" > $OUT/t_int64.log 2>&1
wait
for s in $OUT/racecheck_*.log; do echo $s; tail -n 4 $s; done; tail -n 3 $OUT/t_int64.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
