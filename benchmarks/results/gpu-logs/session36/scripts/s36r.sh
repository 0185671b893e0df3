#!/usr/bin/env bash
# session 36, command R: which steps of test_many_decodes_of_random_shapes_do_not_grow_memory (fp32 tiny decodes of
# random small shapes) differ from stock: session 35's tree, this tree, this tree with each suspect switch off.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
mkdir -p /tmp/o && tar -xf .gpu/old.tar -C /tmp/o
timeout 250 python3 .gpu/s36_rel.py /tmp/o/old > $OUT/rel_old.log 2>&1 &
timeout 250 python3 .gpu/s36_rel.py $PWD > $OUT/rel_new.log 2>&1 &
timeout 250 python3 .gpu/s36_rel.py $PWD DISPATCH_BELOW_AUTOGRAD > $OUT/rel_new_dispatch.log 2>&1 &
timeout 250 python3 .gpu/s36_rel.py $PWD CHANNELS_LAST_UNNORMED_CONVS > $OUT/rel_new_unnormed.log 2>&1 &
timeout 250 python3 .gpu/s36_rel.py $PWD DECODE_WEIGHT_COPIES > $OUT/rel_new_copies.log 2>&1 &
timeout 250 python3 .gpu/s36_rel.py $PWD BATCHED_LATENT_STAGE > $OUT/rel_new_unbatched.log 2>&1 &
wait
for f in $OUT/rel_*.log; do echo "== $f"; grep -v "^DEBUG" $f | tail -n 4; done
