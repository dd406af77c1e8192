#include "host/ops/composite_support.h"

namespace vkfuse {

Result<Tensor> expanded(GraphBuilder& b, Tensor t) {
  if (t.valid()) return t;
  if (!b.status().ok()) return b.status();
  return make_error(ErrorCode::kInternal, "an expansion step produced no tensor");
}

Tensor cast_to_f32(GraphBuilder& b, Tensor t, const std::string& name) {
  if (!t.valid() || b.dtype(t) != DType::kF16) return t;
  return b.op("Cast", {t}, {{"to", static_cast<float>(DType::kF32)}}, name);
}

Tensor cast_back(GraphBuilder& b, Tensor t, DType dtype, const std::string& name) {
  if (!t.valid() || dtype != DType::kF16) return t;
  return b.op("Cast", {t}, {{"to", static_cast<float>(DType::kF16)}}, name);
}

}  // namespace vkfuse
