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
# The second compiler: clang 14 with AddressSanitizer and UndefinedBehaviorSanitizer, every library
# instrumented for libFuzzer. The no-GPU suite must pass there too (the bad-input tests fail cleanly,
# without a leak or UB; the GPU suite is not run: the Vulkan driver itself is not sanitizer-clean),
# then each fuzz target runs a fixed number of runs, about a minute each (tests/fuzz/run.sh;
# docs/hardening.md has the long run).
clang_build="$VKFUSE_BUILD_DIR-clang"
VKFUSE_BUILD_DIR="$clang_build" vkfuse_build -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_C_COMPILER=clang-14 \
  -DVKFUSE_BUILD_TESTS=ON -DVKFUSE_BUILD_BENCH=OFF -DVKFUSE_BUILD_PYTHON=OFF -DVKFUSE_BUILD_SAMPLES=OFF -DVKFUSE_FUZZ=ON
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir "$clang_build" --output-on-failure --timeout 900 -j "$(nproc)" -L unit
"$VKFUSE_ROOT/tests/fuzz/run.sh" "$clang_build"
if [ "$models" = 1 ]; then "$VKFUSE_ROOT/scripts/test_models.sh"; fi
