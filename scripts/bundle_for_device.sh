#!/usr/bin/env bash
# Builds vkfuse and packs what the lent GPU machine needs into .device/ (see ../shared/device/README.md):
# the CLI, the GPU tests and the GEMM benchmark (or the executables named as arguments, e.g.
# bench/vkfuse_bench_chain), their libraries, and the Khronos validation layer
# (that machine has none) with a manifest that finds it next to itself. Binaries are stripped to fit
# the 64 MiB transfer limit. Then, on that machine:
#   export VK_LAYER_PATH=$PWD/.device/layers
#   bash .device/run.sh vkfuse_gpu_tests; bash .device/run.sh bash bench/device_session.sh export fusion
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
vkfuse_install_missing
vkfuse_build -DVKFUSE_BUILD_TESTS=ON -DVKFUSE_BUILD_BENCH=ON
cd "$VKFUSE_ROOT"
shared=${VKFUSE_SHARED_DIR:-$VKFUSE_ROOT/../shared}
bash "$shared/device/prepare.sh"
# Each executable links glslang statically (~9 MB stripped) and the validation layer takes 22 MB: the
# default set fits the 64 MiB transfer limit; name others as arguments (paths under the build folder).
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tools/vkfuse tests/vkfuse_gpu_tests bench/vkfuse_bench_gemm)
bash "$shared/device/bundle.sh" "${targets[@]/#/$VKFUSE_BUILD_DIR/}"
mkdir -p .device/layers
cp /usr/lib/x86_64-linux-gnu/libVkLayer_khronos_validation.so .device/layers/
sed 's|"library_path": ".*"|"library_path": "./libVkLayer_khronos_validation.so"|' \
  /usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json > .device/layers/VkLayer_khronos_validation.json
strip .device/bin/* .device/layers/*.so
du -sh .device .gl
