#!/usr/bin/env bash
# The GPU work of a release, in phases that each fit one 10-minute device command.
# Logs and results go to ${OUT:-benchmarks/results}.
#   bash benchmarks/run_on_gpu.sh tests | tests-ops | tests-decoder | sanitize [TOOL] | probe | levers-tests | levers [MODEL]
#                                 | levers-dtypes [MODEL] | ncu-norm
#                                 | ops | sweep-transposes
#   bash benchmarks/run_on_gpu.sh decode bf16|fp32 480x832|720x1280   (about 4-8 minutes per cell)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-benchmarks/results}"
mkdir -p "$out"
export PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE="${HYPOTHESIS_PROFILE:-ci}"
case "${1:-}" in
  tests|tests-ops|tests-decoder|sanitize|probe|levers-tests|levers|levers-dtypes|ncu-norm|ops|sweep-transposes|decode)
    python3 -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" ;;
  *)
    echo "usage: $0 tests|tests-ops|tests-decoder|sanitize|probe|levers-tests|levers|levers-dtypes|ncu-norm|ops|sweep-transposes|decode" >&2
    exit 2 ;;
esac

# One pytest process per file, all at once (the GPU has room; the CPU side is the bottleneck).
run_parallel() {  # run_parallel LOG_PREFIX PYTEST_ARGS... FILE...: files are the arguments ending in .py
  local prefix="$1"; shift
  local files=() args=()
  for arg in "$@"; do [[ "$arg" == *.py ]] && files+=("$arg") || args+=("$arg"); done
  for file in "${files[@]}"; do
    python3 -m pytest -q -p no:cacheprovider -rfE --tb=short "${args[@]}" "$file" \
      > "$out/${prefix}_$(basename "$file" .py).log" 2>&1 &
  done
  wait || true
  tail -n 3 "$out/${prefix}"_*.log
}

case "$1" in
  tests)  # tests-ops and tests-decoder at once: every CUDA test in one 10-minute slot
    bash benchmarks/run_on_gpu.sh tests-ops &
    bash benchmarks/run_on_gpu.sh tests-decoder &
    wait
    ;;
  tests-ops)  # the ops' CUDA tests (property tests, real decoder sizes, >2**31 elements); -m cuda: every CUDA test
    run_parallel pytest_cuda -m cuda tests/test_cat_pad_5d.py tests/test_dup_up3d_add.py \
      tests/test_bias_add_contiguous.py tests/test_rms_norm_cat_pad_5d.py tests/test_upsample_nearest_2x.py \
      tests/test_conv3d_chunked.py tests/test_channels_last_copy.py tests/test_wan_rms_norm.py
    ;;
  tests-decoder)  # decoder, latent stage, compile path and reliability tests on CUDA
    run_parallel pytest_cuda -m cuda tests/test_decoder.py tests/test_latent_stage.py tests/test_compile.py &
    run_parallel pytest_cuda tests/test_reliability.py &
    wait
    ;;
  probe)  # the bitwise facts behind the levers, and where a decode's time goes
    python3 benchmarks/probe_exactness.py 2>&1 | tee "$out/probe_exactness.log"
    python3 benchmarks/probe_conv_order.py 2>&1 | tee "$out/probe_conv_order.log"
    python3 benchmarks/profile_decode.py --out "$out"
    python3 benchmarks/profile_decode.py --model wan2.2 --variants wanops-eager --out "$out"
    python3 benchmarks/memory_decode.py --out "$out"
    ;;
  sanitize)  # memcheck and racecheck over the CUDA op tests (the >2**31 cases are too slow under the tools)
    files=(tests/test_cat_pad_5d.py tests/test_dup_up3d_add.py tests/test_rms_norm_cat_pad_5d.py tests/test_bias_add_contiguous.py
           tests/test_upsample_nearest_2x.py)
    selection="real_decoder_sizes and bfloat16"
    # What the tools will run, per test function: every op must appear.
    python3 -m pytest -q -p no:cacheprovider --collect-only "${files[@]}" -k "$selection" \
      | sed -n 's/\[.*//p' | sort | uniq -c | tee "$out/sanitizer_selection.log"
    # racecheck takes ~5 s per real-size test: one process per (tool, file), all at once.
    for tool in ${2:-memcheck racecheck}; do
      for file in "${files[@]}"; do
        compute-sanitizer --tool "$tool" --error-exitcode 1 python3 -m pytest -q -p no:cacheprovider \
          "$file" -k "$selection" > "$out/sanitizer_${tool}_$(basename "$file" .py).log" 2>&1 &
      done
    done
    wait || true
    tail -n 3 "$out"/sanitizer_*.log
    ;;
  levers-tests)  # the levers' CUDA exactness tests, then the norm kernel's variants
    run_parallel pytest_levers -k "cuda and (channels_last_convs or silu or switches or permuted or real_decoder_sizes)" \
      tests/test_bias_add_contiguous.py tests/test_rms_norm_cat_pad_5d.py tests/test_upsample_nearest_2x.py \
      tests/test_decoder.py
    python3 benchmarks/inspect_cat_pad_kernel.py 2>&1 | tee "$out/inspect_cat_pad_kernel.log" | grep -v "^  "
    ;;
  levers)  # levers [MODEL]: bf16 480x832 decodes with each lever toggled, eager and compiled (~5 min per model:
    # on a two-GPU host run one model per GPU)
    # shellcheck disable=SC2086
    python3 benchmarks/bench_decode.py --models ${2:-wan2.1 wan2.2} --dtypes bf16 --sizes 480x832 \
      --compile-cases bf16:480x832 --stock-conv-layout --computed-silu --stock-norm-inputs --unfused-residual-adds \
      --stock-upsample --frame-major-upsampler-outputs --out "$out/levers${2:+_$2}"  # one decode.json per process
    ;;
  levers-dtypes)  # levers-dtypes [MODEL]: fp32 and fp16 480x832 eager decodes with each dtype's conv-layout
    # switch toggled; then their whole-decode CUDA tests
    for dtype in fp32 fp16; do
      # shellcheck disable=SC2086
      python3 benchmarks/bench_decode.py --models ${2:-wan2.1 wan2.2} --dtypes $dtype --sizes 480x832 --compile-cases \
        --$dtype-stock-conv-layout --out "$out/levers_$dtype${2:+_$2}"
    done
    python3 -m pytest -q -p no:cacheprovider -rfE --tb=short tests/test_decoder.py \
      -k "frame_major_norms_in_stock_layout or (channels_last_conv and (float32 or float16 or kernels or profiler))" 2>&1 | tee "$out/pytest_levers_dtypes${2:+_$2}.log" | tail -n 3
    ;;
  ncu-norm)  # what bounds the fused norm (session 37: neither its arithmetic nor its tile): Nsight Compute's full set,
    # with source counters, of Wan2.2's 256-channel first and second norm and each one's plain copy (~2 minutes)
    ncu --clock-control none --kernel-name cat_pad_5d_kernel --launch-count 8 --set full --import-source yes \
      -o "$out/ncu_norm" -f python3 benchmarks/ncu_norm_launches.py
    ncu -i "$out/ncu_norm.ncu-rep" --page details > "$out/ncu_norm.txt"
    # per-instruction counters of all eight launches: the first norm, its copy, the second norm, its copy (two each)
    ncu -i "$out/ncu_norm.ncu-rep" --page source --print-source sass > "$out/ncu_norm_source.txt"
    grep -E "Duration|DRAM Throughput|Issued Warp Per|Achieved Occupancy|Registers Per" "$out/ncu_norm.txt"
    ;;
  ops)
    python3 benchmarks/bench_ops.py --out "$out"
    ;;
  sweep-transposes)  # the tiles of the two transposing passes: bias_add_contiguous (Inductor's transpose of the
    # same tensor was 1.56x faster) and upsample_nearest_2x into channels_last (~0.55 TB/s in the session-7 profile)
    # One after the other: two timing sweeps sharing a GPU would time each other.
    python3 benchmarks/sweep_tiles.py --bias-add 2>&1 | tee "$out/sweep_bias_add.txt"
    python3 benchmarks/sweep_tiles.py --upsample 2>&1 | tee "$out/sweep_upsample.txt"
    ;;
  decode)  # decode DTYPE SIZE: both models, stock and wanops, eager and compiled (one cell of the matrix)
    python3 benchmarks/bench_decode.py --models wan2.1 wan2.2 --dtypes "${2:?decode needs DTYPE SIZE}" --sizes "${3:?decode needs DTYPE SIZE}" \
      --compile-cases "$2:$3" --out "$out"
    ;;
esac
