#!/usr/bin/env bash
# session 12, command A: Wan2.2 bf16 720x1280 (refusals, peak); decoder CUDA tests on the code since a08b6d0
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=ci
python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name())"
pyt() { python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "$@"; }
timeout 170 python3 benchmarks/bench_decode.py --models wan2.2 --dtypes bf16 --sizes 720x1280 --compile-cases \
    --out $OUT/bf16_720_wan2.2 > $OUT/bf16_720_wan2.2.log 2>&1
timeout 300 bash -c "$(declare -f pyt); pyt -k cuda tests/test_decoder.py" > $OUT/t_decoder_cuda.log 2>&1 &
timeout 150 python3 benchmarks/memory_decode.py --model wan2.2 --dtype bf16 --size 720x1280 --variants wanops-eager \
    --out $OUT/mem > $OUT/mem.log 2>&1
wait
grep -h -B2 -A8 "^variant" $OUT/bf16_720_wan2.2.log; grep -i -A5 refus $OUT/bf16_720_wan2.2.log | head -30
tail -n 30 $OUT/mem.log; tail -n 8 $OUT/t_decoder_cuda.log
cd $OUT && tar czf logs.tgz --exclude logs.tgz . 2>/dev/null; true
