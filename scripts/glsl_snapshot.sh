#!/usr/bin/env bash
# The generated GLSL of every kernel of every reference model and test model, for two fixed device plans
# (lavapipe's limits; an NVIDIA GPU's, with cooperative matrices), f32 and f16 storage, batch 1 and 8,
# fused and unfused -- without a GPU and without compiling (tests/snapshot/glsl_snapshot.cpp).
#
#   scripts/glsl_snapshot.sh OUT            writes the snapshot tree to OUT (replacing it)
#   scripts/glsl_snapshot.sh --compare A B  exits 0 when the trees are byte-identical, else lists the files
#   scripts/glsl_snapshot.sh --compare-code A B
#                                           the same with // comments and blank lines dropped: for a change
#                                           that edits only the shader snippets' comments
#
# A restructuring that must not change behaviour: snapshot before, snapshot after, compare. The 13
# reference models are exported once with torch (scripts/export_models.py, cached in $VKFUSE_MODELS_DIR);
# without python3-torch only the models under tests/data are covered, and the script says so.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [ "${1:-}" = "--compare" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --compare A B" >&2; exit 2; }
  if diff -rq "$2" "$3"; then
    echo "identical: $(find "$2" -name '*.comp' | wc -l) kernels, $(find "$2" -name '*error.txt' | wc -l) recorded errors"
    exit 0
  fi
  exit 1
fi
if [ "${1:-}" = "--compare-code" ]; then
  [ $# -eq 3 ] || { echo "usage: $0 --compare-code A B" >&2; exit 2; }
  strip() { (cd "$1" && find . -type f | sort | while read -r f; do
    echo "== $f"; sed -e 's://.*$::' -e '/^[[:space:]]*$/d' "$f"; done); }
  if diff <(strip "$2") <(strip "$3") > /dev/null; then
    echo "identical but for comments: $(find "$2" -name '*.comp' | wc -l) kernels"
    exit 0
  fi
  diff <(strip "$2") <(strip "$3") | head -40
  exit 1
fi
[ $# -eq 1 ] || { echo "usage: $0 OUT | --compare A B | --compare-code A B" >&2; exit 2; }
out=$1
tool="$VKFUSE_BUILD_DIR/tests/vkfuse_glsl_snapshot"
[ -x "$tool" ] || { echo "build first: $tool is missing (cmake --build $VKFUSE_BUILD_DIR)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out"
models=()
for m in "$VKFUSE_ROOT"/tests/data/models/*/model.onnx "$VKFUSE_ROOT"/tests/data/onnx/*/model.onnx; do
  [ -f "$m" ] && models+=("$m")
done
models_dir=${VKFUSE_MODELS_DIR:-$VKFUSE_BUILD_DIR/models}
if /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  /usr/bin/python3 "$VKFUSE_ROOT/scripts/export_models.py" --out "$models_dir" >&2
  for m in "$models_dir"/*/model.onnx; do models+=("$m"); done
else
  echo "glsl_snapshot: no python3-torch here, so only the models under tests/data (not the 13 reference models)" >&2
fi
for m in "${models[@]}"; do
  name="$(basename "$(dirname "$(dirname "$m")")")-$(basename "$(dirname "$m")")"
  "$tool" "$m" "$out/$name"
done
echo "$out: ${#models[@]} models, $(find "$out" -name '*.comp' | wc -l) kernels, $(find "$out" -name '*error.txt' | wc -l) recorded errors"
