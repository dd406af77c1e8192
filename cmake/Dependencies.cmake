# Every external dependency is found here, once. A missing one stops configuration with the Debian
# package that provides it.

function(vkfuse_require found_var what package)
  if(NOT ${found_var})
    message(FATAL_ERROR "vkfuse: ${what} not found. On Debian 12 install it with: apt-get install ${package}")
  endif()
endfunction()

find_package(Vulkan QUIET)
vkfuse_require(Vulkan_FOUND "Vulkan loader and headers" "libvulkan-dev")

find_path(VKFUSE_GLSLANG_INCLUDE glslang/Public/ShaderLang.h)
vkfuse_require(VKFUSE_GLSLANG_INCLUDE "glslang headers" "glslang-dev")
set(VKFUSE_GLSLANG_LIBS)
foreach(lib glslang SPIRV MachineIndependent OSDependent GenericCodeGen OGLCompiler glslang-default-resource-limits)
  find_library(VKFUSE_LIB_${lib} NAMES lib${lib}.a ${lib})
  vkfuse_require(VKFUSE_LIB_${lib} "glslang library ${lib}" "glslang-dev")
  list(APPEND VKFUSE_GLSLANG_LIBS ${VKFUSE_LIB_${lib}})
endforeach()
add_library(vkfuse_glslang INTERFACE)
target_include_directories(vkfuse_glslang SYSTEM INTERFACE ${VKFUSE_GLSLANG_INCLUDE})
# The static archives depend on each other in a cycle; link them as a group.
target_link_libraries(vkfuse_glslang INTERFACE -Wl,--start-group ${VKFUSE_GLSLANG_LIBS} -Wl,--end-group Threads::Threads)

find_package(Threads REQUIRED)

find_package(SPIRV-Tools-opt CONFIG QUIET)
find_package(SPIRV-Tools CONFIG QUIET)
if(TARGET SPIRV-Tools-static)
  set(VKFUSE_SPIRV_TOOLS SPIRV-Tools-static)
elseif(TARGET SPIRV-Tools)
  set(VKFUSE_SPIRV_TOOLS SPIRV-Tools)
endif()
vkfuse_require(VKFUSE_SPIRV_TOOLS "SPIRV-Tools" "spirv-tools")
vkfuse_require(SPIRV-Tools-opt_FOUND "SPIRV-Tools optimizer" "spirv-tools")

find_path(VKFUSE_GLM_INCLUDE glm/glm.hpp)
vkfuse_require(VKFUSE_GLM_INCLUDE "GLM" "libglm-dev")

if(VKFUSE_BUILD_TESTS)
  find_package(doctest CONFIG QUIET)
  vkfuse_require(doctest_FOUND "doctest" "doctest-dev")
endif()

# ONNX models: protobuf and the system's onnx.proto (compiled with protoc at build time; the
# generated classes live in namespace onnx, in the internal target vkfuse_onnx_proto).
find_package(Protobuf QUIET)
vkfuse_require(Protobuf_FOUND "protobuf (library and protoc)" "libprotobuf-dev protobuf-compiler")
find_file(VKFUSE_ONNX_PROTO onnx/onnx.proto)
vkfuse_require(VKFUSE_ONNX_PROTO "onnx.proto" "libonnx-dev")
