#!/usr/bin/env bash
# session 11, command A: one-probe conv check: decoder CUDA tests (fp16 lever included), first-decode memory new vs old check
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
nvidia-smi -L > $OUT/gpus.txt
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name(), torch.backends.cudnn.version())" >> $OUT/gpus.txt
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
timeout 300 bash -c "$(declare -f pyt); pyt -k cuda tests/test_decoder.py" > $OUT/t_decoder_cuda.log 2>&1
for d in bf16 fp32; do timeout 110 python3 .gpu/mem_first.py --model wan2.1 --dtype $d > $OUT/mem_first_$d.log 2>&1; done
tail -n 12 $OUT/t_decoder_cuda.log; cat $OUT/mem_first_*.log | tail -n 20; cat $OUT/gpus.txt
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null
