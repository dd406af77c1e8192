#include "codegen/shader_library.h"

#include <string>

namespace vkfuse {

Result<std::string_view> find_shader(std::string_view path) {
  for (const EmbeddedShader& shader : embedded_shaders())
    if (shader.path == path) return shader.source;
  return make_error(ErrorCode::kNotFound, "no embedded shader 'shaders/" + std::string(path) + "'");
}

}  // namespace vkfuse
