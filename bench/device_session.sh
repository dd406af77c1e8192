#!/usr/bin/env bash
# On the lent GPU machine, under the bundle's environment (see bench/README.md):
#   bash .device/run.sh bash bench/device_session.sh STEP...
# Steps (each writes under $OUT, default /tmp/vkfuse-out):
#   export   the reference models with that machine's torch into $VKFUSE_MODELS_DIR (default
#            /tmp/vkfuse-models; skipped per model when already there)
#   compare  `vkfuse run --compare` of every model against torch's output -> compare.log
#   fusion   FusionBench over every model (bench/fusion_bench.sh) -> fusion.md, fusion.jsonl
#   gemm     vkfuse_bench_gemm and torch.matmul (TF32 off) at 1024..8192 -> gemm.log
# Measures and reports; asserts nothing.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/vkfuse-out}
models=${VKFUSE_MODELS_DIR:-/tmp/vkfuse-models}
mkdir -p "$out"
python=${PYTHON:-python3}
for step in "$@"; do
  echo "=== $step ($(date -u +%H:%M:%S))"
  case $step in
    export) "$python" "$root/scripts/export_models.py" --out "$models" ${VKFUSE_MODELS:+--models "$VKFUSE_MODELS"} ;;
    compare)
      for dir in "$models"/*/; do
        echo "== $(basename "$dir")"
        vkfuse run "$dir/model.onnx" --input "input=$dir/input.npy" --compare "$dir" --runs 2
      done 2>&1 | tee "$out/compare.log" | grep -E "^==|outputs|FAIL|error" ;;
    fusion) bash "$root/bench/fusion_bench.sh" "$models" "$out/fusion.md" vkfuse ${FUSION_FLAGS:-} ;;
    gemm)
      { vkfuse_bench_gemm --sizes 1024,2048,4096,8192 --dtype f32
        "$python" "$root/bench/torch_matmul.py" --sizes 1024,2048,4096,8192 --dtype f32; } 2>&1 | tee "$out/gemm.log" ;;
    *) echo "unknown step '$step'" >&2; exit 2 ;;
  esac
done
