#!/usr/bin/env bash
# The per-frame benchmark on the lent GPU machine, as one command:
#   bash .device/run.sh bash bench/frame_session.sh
# Exports the models with this machine's torch, then per model and precision: vkfuse_bench_frame (host
# path, device path, two in flight, GPU time) and bench/torch_frame.py (host path, CUDA graph), first on
# the models' input tensors, then on a 1920x1080 RGBA8 frame ($IMAGE) resized and normalized on the GPU;
# then the segmentation models ($SEG_MODELS) on that frame with the output shown as a palette image.
# JSON lines to $OUT/frame.jsonl, the log to $OUT/frame.log. Measures only; asserts nothing.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/vkfuse-out}
work=${WORK:-/tmp/vkfuse-frame}
models=${FRAME_MODELS:-mobilenet_v3_small,resnet50}
seg_models=${SEG_MODELS:-lraspp_mobilenet_v3_large}
frames=${FRAMES:-300}
mkdir -p "$out" "$work/models"
export VKFUSE_CACHE_DIR=$work/vkfuse-cache PYTHONUNBUFFERED=1
log() { echo "[$(date +%T)] $*" | tee -a "$out/frame.log" >&2; }
{
  echo "# $(date -u +%F) commit $(cat "$root/.device/COMMIT" 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# /'
} > "$out/frame.jsonl"
log "export $models,$seg_models"
timeout 400 python3 "$root/scripts/export_models.py" --out "$work/models" --models "$models,$seg_models" >>"$out/frame.log" 2>&1
for precision in fp32 fp16; do
  for m in ${models//,/ }; do
    log "vkfuse $m $precision"
    timeout 120 vkfuse_bench_frame "$work/models/$m/model.onnx" --frames "$frames" --precision "$precision" \
      >>"$out/frame.jsonl" 2>>"$out/frame.log"
  done
  log "torch $precision"
  timeout 200 python3 "$root/bench/torch_frame.py" --models-dir "$work/models" --models "$models" \
    --frames "$frames" --precision "$precision" >>"$out/frame.jsonl" 2>>"$out/frame.log"
  for m in ${models//,/ }; do
    log "vkfuse $m $precision, ${IMAGE:-1920x1080} frame"
    timeout 120 vkfuse_bench_frame "$work/models/$m/model.onnx" --frames "$frames" --precision "$precision" \
      --image "${IMAGE:-1920x1080}" >>"$out/frame.jsonl" 2>>"$out/frame.log"
  done
  log "torch $precision, ${IMAGE:-1920x1080} frame"
  timeout 200 python3 "$root/bench/torch_frame.py" --models-dir "$work/models" --models "$models" \
    --frames "$frames" --precision "$precision" --image "${IMAGE:-1920x1080}" >>"$out/frame.jsonl" 2>>"$out/frame.log"
  for m in ${seg_models//,/ }; do
    log "vkfuse $m $precision, ${IMAGE:-1920x1080} frame, palette image out"
    timeout 120 vkfuse_bench_frame "$work/models/$m/model.onnx" --frames "$frames" --precision "$precision" \
      --image "${IMAGE:-1920x1080}" --output-image palette >>"$out/frame.jsonl" 2>>"$out/frame.log"
  done
  log "torch $precision, ${IMAGE:-1920x1080} frame, palette image out"
  timeout 200 python3 "$root/bench/torch_frame.py" --models-dir "$work/models" --models "$seg_models" \
    --frames "$frames" --precision "$precision" --image "${IMAGE:-1920x1080}" --output-image palette \
    >>"$out/frame.jsonl" 2>>"$out/frame.log"
done
log done
