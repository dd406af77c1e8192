// The composite op table (see host/op_registry.h).
#include "host/op_registry.h"

namespace vkfuse {

std::span<const OpDef> composite_ops() { return {}; }

}  // namespace vkfuse
