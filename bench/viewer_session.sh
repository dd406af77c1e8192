#!/usr/bin/env bash
# The video viewer on the lent GPU machine, offscreen, as one command:
#   bash .device/run.sh bash bench/viewer_session.sh
# Exports the classifier and segmentation models with this machine's torch, then runs the viewer
# offscreen on $SIZE (1920x1080) frames for $FRAMES frames per configuration: the embedded cartoon
# filter (at the frame's size), a classifier and a segmentation model, fused and unfused, fp32 and
# fp16. The GPU machine has no FFmpeg, so it runs video_viewer_lite (VKFUSE_VIEWER_LITE=ON): the frames
# are the generated test pattern, "decode" is drawing it on the CPU. One JSON line per run (the
# viewer's --json summary: frame, model GPU, upload, draw, decode and present times) to
# $OUT/viewer.jsonl, the log to $OUT/viewer.log. Measures only; asserts nothing.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-/tmp/vkfuse-out}
work=${WORK:-/tmp/vkfuse-viewer}
viewer=${VIEWER:-video_viewer_lite}
size=${SIZE:-1920x1080}
models=${VIEWER_MODELS:-mobilenet_v3_small,lraspp_mobilenet_v3_large}
frames=${FRAMES:-300}
mkdir -p "$out" "$work/models"
export VKFUSE_CACHE_DIR=$work/vkfuse-cache PYTHONUNBUFFERED=1
log() { echo "[$(date +%T)] $*" | tee -a "$out/viewer.log" >&2; }
{
  echo "# $(date -u +%F) commit $(cat "$root/.device/COMMIT" 2>/dev/null || echo unknown), $viewer, testsrc $size"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/# /'
} > "$out/viewer.jsonl"
log "export $models"
timeout 300 python3 "$root/scripts/export_models.py" --out "$work/models" --models "$models" >>"$out/viewer.log" 2>&1
for model in cartoon ${models//,/ }; do
  model_flag=()
  [ "$model" = cartoon ] || model_flag=(--model "$work/models/$model/model.onnx")
  for precision in fp32 fp16; do
    for fusion in fused unfused; do
      fusion_flag=()
      [ "$fusion" = fused ] || fusion_flag=(--no-fusion)
      log "viewer $model $precision $fusion"
      timeout 180 "$viewer" --offscreen --input testsrc --input-size "$size" --frames "$frames" --precision "$precision" \
        "${fusion_flag[@]}" "${model_flag[@]}" --json >>"$out/viewer.jsonl" 2>>"$out/viewer.log" ||
        log "viewer $model $precision $fusion failed ($?)"
    done
  done
done
log done
