# Every external dependency is found here, once. A missing one stops configuration with the Debian
# package that provides it.

function(vkfuse_require found_var what package)
  if(NOT ${found_var})
    message(FATAL_ERROR "vkfuse: ${what} not found. On Debian 12 install it with: apt-get install ${package}")
  endif()
endfunction()

find_package(Vulkan QUIET)
vkfuse_require(Vulkan_FOUND "Vulkan loader and headers" "libvulkan-dev")

find_package(Threads REQUIRED)

# SPIRV-Tools first: glslang's package names its targets.
find_package(SPIRV-Tools-opt CONFIG QUIET)
find_package(SPIRV-Tools CONFIG QUIET)
if(TARGET SPIRV-Tools-static)
  set(VKFUSE_SPIRV_TOOLS SPIRV-Tools-static)
elseif(TARGET SPIRV-Tools)
  set(VKFUSE_SPIRV_TOOLS SPIRV-Tools)
endif()
vkfuse_require(VKFUSE_SPIRV_TOOLS "SPIRV-Tools" "spirv-tools")
vkfuse_require(SPIRV-Tools-opt_FOUND "SPIRV-Tools optimizer" "spirv-tools")

find_package(glslang CONFIG QUIET)
vkfuse_require(glslang_FOUND "glslang (its CMake package, which also names glslangValidator)" "glslang-dev glslang-tools")
set(VKFUSE_GLSLANG_TARGETS glslang::glslang glslang::SPIRV glslang::glslang-default-resource-limits)

if(VKFUSE_BUILD_CLI)
  find_package(CLI11 2.1 CONFIG QUIET)
  vkfuse_require(CLI11_FOUND "CLI11 (the CLI's argument parser; or -DVKFUSE_BUILD_CLI=OFF)" "libcli11-dev")
endif()

if(VKFUSE_BUILD_TESTS)
  find_package(doctest CONFIG QUIET)
  vkfuse_require(doctest_FOUND "doctest" "doctest-dev")
endif()

# ONNX models: protobuf and the system's onnx.proto (compiled with protoc at build time; the
# generated classes live in namespace onnx, in the internal object library vkfuse_onnx_proto).
find_package(Protobuf QUIET)
vkfuse_require(Protobuf_FOUND "protobuf (library and protoc)" "libprotobuf-dev protobuf-compiler")
find_file(VKFUSE_ONNX_PROTO onnx/onnx.proto)
vkfuse_require(VKFUSE_ONNX_PROTO "onnx.proto" "libonnx-dev")
