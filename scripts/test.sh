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
# The no-GPU suite again under AddressSanitizer and UndefinedBehaviorSanitizer: the bad-input tests
# (truncated and hostile model files, wrong tensor files) must fail cleanly, without a leak or UB.
# (The GPU suite is not run here: the Vulkan driver itself is not sanitizer-clean.)
VKFUSE_BUILD_DIR="$VKFUSE_BUILD_DIR-sanitize" vkfuse_build -DVKFUSE_BUILD_TESTS=ON -DVKFUSE_BUILD_BENCH=OFF -DVKFUSE_BUILD_PYTHON=OFF -DVKFUSE_SANITIZE=ON
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$VKFUSE_BUILD_DIR-sanitize" --output-on-failure --timeout 900 -j "$(nproc)" -L unit
if [ "$models" = 1 ]; then "$VKFUSE_ROOT/scripts/test_models.sh"; fi
