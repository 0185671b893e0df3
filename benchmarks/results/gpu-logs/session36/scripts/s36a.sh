#!/usr/bin/env bash
# session 36, command A: the CPU trims (dispatch below autograd in decode_latents, one type check per layer, the int64
# test by storage, no device guard on the current device, the SM count cached): the decoder's four CUDA lists, the
# switch off in whole decodes, the latent stage's, reliability's and the op tests' CUDA subsets in parallel; then the
# CPU cost per op call and a two-latent-frame decode's issue time, session 35's tree (/tmp/old) against this one.
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
{ nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; git log --oneline -1; git status --short; python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version())"; lscpu | grep -i "model name"; } > $OUT/meta.txt 2>&1
mkdir -p /tmp/o && tar -xf .gpu/old.tar -C /tmp/o
t=320
for g in 0 1 2 3; do
  mapfile -t ids < .gpu/s30_dec$g.txt
  timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${ids[@]}" > /tmp/t_decoder_$g.log 2>&1 &
done
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py -k "autograd-dispatch" > /tmp/t_decoder_switch.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short -k "cuda or below_autograd" tests/test_latent_stage.py > /tmp/t_latent_stage.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_reliability.py > /tmp/t_reliability.log 2>&1 &
timeout $t python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_cat_pad_5d.py -k "(cuda and into) or opcheck" > /tmp/t_cat_pad.log 2>&1 &
wait
for f in /tmp/t_*.log; do echo "== $f"; grep -v "^DEBUG" $f; done > $OUT/tests.log
for f in /tmp/t_*.log; do echo "== $f"; tail -n 2 $f; done
for tree in /tmp/o/old $PWD; do
  echo "=== $tree" >> $OUT/launch_costs.log
  PYTHONPATH=/tmp/site:$tree timeout 100 python3 $tree/benchmarks/cpu_launch_costs.py 2>&1 | grep -v "^DEBUG" >> $OUT/launch_costs.log
done
cat $OUT/launch_costs.log
PYTHONPATH=/tmp/site:/tmp/o/old timeout 120 python3 /tmp/o/old/benchmarks/cpu_profile_decode.py --model wan2.2 --frames 5 --variants wanops-eager --top 5 2>&1 | grep -v "^DEBUG" > $OUT/cpu_old_f5.log
timeout 150 python3 benchmarks/cpu_profile_decode.py --model wan2.2 --frames 5 --variants wanops-eager wanops-eager-autograd-dispatch --top 5 2>&1 | grep -v "^DEBUG" > $OUT/cpu_new_f5.log
grep "issuing" $OUT/cpu_old_f5.log $OUT/cpu_new_f5.log
cat $OUT/meta.txt
