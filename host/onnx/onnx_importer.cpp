// Placeholder until the importer lands: the API exists so callers build.
#include <vkfuse/onnx.hpp>

namespace vkfuse {

Result<Graph> load_onnx(const std::string& path, const OnnxOptions&) {
  return make_error(ErrorCode::kUnsupported, "load_onnx('" + path + "'): the ONNX importer is not built yet");
}

}  // namespace vkfuse
