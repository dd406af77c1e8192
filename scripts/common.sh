# Shared by the README's commands: install what is missing (Debian 12, as root), configure, build.
# Sourced, not run.
set -euo pipefail

VKFUSE_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VKFUSE_BUILD_DIR=${VKFUSE_BUILD_DIR:-$VKFUSE_ROOT/build}

# Build tools, the Vulkan loader and headers, lavapipe (Vulkan on the CPU, for machines without a GPU),
# the Khronos validation layer, glslang, SPIRV-Tools, doctest, protobuf and onnx.proto (ONNX import),
# pybind11 and Python's headers for the Python module, numpy and pytest for its tests, CLI11 for the CLI;
# for samples/video_viewer GLFW, FFmpeg's libraries and CLI, Dear ImGui, and Xvfb for its window test;
# clang 14 and its sanitizer and libFuzzer runtimes for the second compiler's build and the fuzz targets.
VKFUSE_PACKAGES=(cmake ninja-build g++ pkg-config libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
                 vulkan-tools glslang-dev glslang-tools spirv-tools doctest-dev libprotobuf-dev protobuf-compiler
                 libonnx-dev pybind11-dev python3-dev python3-numpy python3-pytest libcli11-dev
                 libglfw3-dev libavformat-dev libavcodec-dev libswscale-dev libavdevice-dev ffmpeg libimgui-dev
                 xvfb xauth clang-14 libclang-rt-14-dev)

vkfuse_install_missing() {
  local missing=()
  for p in "${VKFUSE_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "vkfuse: installing ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "vkfuse: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

vkfuse_build() {
  # Debian's python3 (the one with python3-numpy) even where another python3 comes first on PATH.
  local python=()
  [ -x /usr/bin/python3 ] && python=(-DPython_EXECUTABLE=/usr/bin/python3)
  cmake -S "$VKFUSE_ROOT" -B "$VKFUSE_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${python[@]}" "$@"
  cmake --build "$VKFUSE_BUILD_DIR" --parallel "$(nproc)"
}
