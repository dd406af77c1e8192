#!/usr/bin/env bash
# The README's second command: install what is missing, build, run the whole suite (unit tests, then GPU
# tests on whatever Vulkan device there is -- lavapipe on a machine without a GPU -- with the Khronos
# validation layer on; any validation error fails a test).
# `--models` also runs the whole reference model set (scripts/test_models.sh) after the suite.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
models=0
args=()
for a in "$@"; do
  if [ "$a" = "--models" ]; then models=1; else args+=("$a"); fi
done
vkfuse_install_missing
vkfuse_build -DVKFUSE_BUILD_TESTS=ON
# Tests use their own kernel cache directories; never the user's.
export VKFUSE_CACHE_DIR="$VKFUSE_BUILD_DIR/test-kernel-cache"
ctest --test-dir "$VKFUSE_BUILD_DIR" --output-on-failure --timeout 900 -j "$(nproc)" "${args[@]}"
if [ "$models" = 1 ]; then "$VKFUSE_ROOT/scripts/test_models.sh"; fi
