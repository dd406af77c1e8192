#!/usr/bin/env bash
# Builds vkfuse and packs what the lent GPU machine needs into .device/ (see ../shared/device/README.md):
# the CLI, the benchmark, the GPU tests, the sample, their libraries, and the Khronos validation layer
# (that machine has none) with a manifest that finds it next to itself. Binaries are stripped to fit
# the 64 MiB transfer limit. Then, on that machine:
#   export VK_LAYER_PATH=$PWD/.device/layers
#   bash .device/run.sh vkfuse_gpu_tests; bash .device/run.sh vkfuse demo; bash .device/run.sh vkfuse_bench_chain
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
vkfuse_install_missing
vkfuse_build -DVKFUSE_BUILD_TESTS=ON -DVKFUSE_BUILD_BENCH=ON
cd "$VKFUSE_ROOT"
shared=${VKFUSE_SHARED_DIR:-$VKFUSE_ROOT/../shared}
bash "$shared/device/prepare.sh"
bash "$shared/device/bundle.sh" "$VKFUSE_BUILD_DIR/tools/vkfuse" "$VKFUSE_BUILD_DIR/bench/vkfuse_bench_chain" \
  "$VKFUSE_BUILD_DIR/bench/vkfuse_bench_gemm" "$VKFUSE_BUILD_DIR/tests/vkfuse_gpu_tests" \
  "$VKFUSE_BUILD_DIR/samples/hello_fusion/hello_fusion"
mkdir -p .device/layers
cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so .device/layers/
sed 's|"library_path": ".*"|"library_path": "./libVkLayer_khronos_validation.so"|' \
  /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json > .device/layers/VkLayer_khronos_validation.json
strip .device/bin/* .device/layers/*.so
du -sh .device .gl
