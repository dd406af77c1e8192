// The GLSL files under shaders/, embedded into the library at build time (cmake/EmbedShaders.cmake).
#pragma once

#include <span>
#include <string_view>

#include <vkfuse/status.hpp>

namespace vkfuse {

struct EmbeddedShader {
  std::string_view path;    // relative to shaders/, e.g. "ops/add.glsl"
  std::string_view source;
};

std::span<const EmbeddedShader> embedded_shaders();

// kNotFound naming the path when no such file was embedded.
Result<std::string_view> find_shader(std::string_view path);

}  // namespace vkfuse
