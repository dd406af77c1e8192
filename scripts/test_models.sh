#!/usr/bin/env bash
# The whole reference model set (13 torchvision models, calibrated random weights) on the current
# device: export once with torch (cached in $VKFUSE_MODELS_DIR), then `vkfuse run --compare` each
# model, fused, against torch's output (max error relative to the output's largest magnitude).
# VKFUSE_PRECISION=fp16 runs them with 16-bit storage (tolerance 3e-2 unless VKFUSE_MODELS_TOLERANCE).
# Called by `scripts/test.sh --models`; needs Debian's python3-torch and python3-torchvision.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
models_dir=${VKFUSE_MODELS_DIR:-$VKFUSE_BUILD_DIR/models}
precision=${VKFUSE_PRECISION:-fp32}
default_tolerance=1e-3
[ "$precision" = fp16 ] && default_tolerance=3e-2
tolerance=${VKFUSE_MODELS_TOLERANCE:-$default_tolerance}
VKFUSE_PACKAGES=(python3-torch python3-torchvision python3-numpy)
vkfuse_install_missing
/usr/bin/python3 "$VKFUSE_ROOT/scripts/export_models.py" --out "$models_dir" ${VKFUSE_MODELS:+--models "$VKFUSE_MODELS"}
failed=()
for dir in "$models_dir"/*/; do
  name=$(basename "$dir")
  [ -n "${VKFUSE_MODELS:-}" ] && [[ ",$VKFUSE_MODELS," != *",$name,"* ]] && continue
  echo "== $name"
  if ! "$VKFUSE_BUILD_DIR/tools/vkfuse" run "$dir/model.onnx" --input "input=$dir/input.npy" \
       --output-dir "$VKFUSE_BUILD_DIR/model-outputs/$precision/$name" --compare "$dir" --tolerance "$tolerance" --precision "$precision"; then
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "models that failed: ${failed[*]}" >&2
  exit 1
fi
echo "all models match torch in $precision within $tolerance of the output's largest magnitude"
