#include "codegen/kernel_stage.h"

namespace vkfuse {
namespace {

bool is_contiguous(const KernelInput& input) {
  if (input.strides.empty()) return true;
  std::int64_t expected = 1;
  for (std::size_t d = input.shape.size(); d-- > 0;) {
    if (input.shape[d] != 1 && input.strides[d] != expected) return false;
    expected *= input.shape[d];
  }
  return true;
}

}  // namespace

InputAccess classify(const KernelInput& input, std::int64_t domain_numel) {
  if (input.is_literal) return InputAccess::kLiteral;
  const std::int64_t numel = shape_numel(input.shape);
  if (numel == 1) return InputAccess::kScalar;
  // Vector loads need the domain's own layout, starting at the binding.
  if (numel == domain_numel && is_contiguous(input) && input.offset == 0)
    return InputAccess::kFull;
  return InputAccess::kBroadcast;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const std::size_t lead = to.size() - from.size();
  for (std::size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1 && from[d] != to[d + lead]) return false;
  return true;
}

std::string join_call(const std::string& name, const std::vector<std::string>& args) {
  std::string call = name + "(";
  for (std::size_t i = 0; i < args.size(); ++i) call += (i ? ", " : "") + args[i];
  return call + ");";
}

Stage make_stage(const std::vector<KernelInput>& inputs, const std::vector<KernelOp>& ops, const Shape& shape,
                 std::string prefix, std::map<int, int>& shared, int& next_binding) {
  Stage stage{inputs, ops, shape, std::move(prefix), {}, {}};
  for (const KernelInput& input : inputs) {
    stage.access.push_back(classify(input, shape_numel(shape)));
    int b = -1;
    if (input.bindings() > 0) {
      auto it = input.buffer < 0 ? shared.end() : shared.find(input.buffer);
      if (it != shared.end()) {
        b = it->second;
      } else {
        b = next_binding;
        next_binding += static_cast<int>(input.bindings());
        if (input.buffer >= 0) shared[input.buffer] = b;
      }
    }
    stage.binding.push_back(b);
  }
  return stage;
}

}  // namespace vkfuse
