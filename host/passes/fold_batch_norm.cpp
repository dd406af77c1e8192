#include "host/passes/fold_batch_norm.h"

#include <cmath>
#include <map>

#include "onnx.pb.h"

namespace vkfuse::onnx_import {
namespace {

const ConstTensor* constant_of(const ImportState& state, const std::string& name) {
  if (name.empty()) return nullptr;
  auto it = state.values.find(name);
  return it == state.values.end() ? nullptr : it->second.constant.get();
}

int uses_of(const ImportState& state, const std::string& name) {
  auto it = state.uses.find(name);
  return it == state.uses.end() ? 0 : it->second;
}

std::int64_t int_attr(const onnx::NodeProto& node, const char* name, std::int64_t fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.i();
  return fallback;
}

float float_attr(const onnx::NodeProto& node, const char* name, float fallback) {
  for (const auto& a : node.attribute())
    if (a.name() == name) return a.type() == onnx::AttributeProto::INT ? static_cast<float>(a.i()) : a.f();
  return fallback;
}

void set_float_attr(onnx::NodeProto& node, const char* name, float value) {
  for (auto& a : *node.mutable_attribute())
    if (a.name() == name) {
      a.set_type(onnx::AttributeProto::FLOAT);
      a.set_f(value);
      return;
    }
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(value);
}

std::string fresh_name(const ImportState& state, const std::string& base) {
  std::string name = base;
  for (int k = 1; state.values.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// Which axis of the weight holds the output channel, or -1 when the producer cannot absorb a BN.
int channel_axis(const onnx::NodeProto& producer, const ConstTensor& weight) {
  const std::string& op = producer.op_type();
  if (op == "Conv" && weight.shape.size() >= 3) return 0;
  if (op == "ConvTranspose" && weight.shape.size() >= 3 && int_attr(producer, "group", 1) == 1) return 1;
  if (op == "Gemm" && weight.shape.size() == 2) return int_attr(producer, "transB", 0) != 0 ? 0 : 1;
  return -1;
}

// Tries to fold nodes[bn] into its producer; true when it did.
Result<bool> try_fold(std::vector<onnx::NodeProto>& nodes, std::size_t bn_index, std::size_t producer_index,
                      ImportState& state) {
  const onnx::NodeProto& bn = nodes[bn_index];
  onnx::NodeProto& producer = nodes[producer_index];
  if (int_attr(bn, "training_mode", 0) != 0 || bn.input_size() < 5) return false;
  for (int k = 1; k < bn.output_size(); ++k)
    if (!bn.output(k).empty() && uses_of(state, bn.output(k)) > 0) return false;
  if (producer.input_size() < 2 || uses_of(state, producer.output(0)) != 1) return false;
  const ConstTensor* weight = constant_of(state, producer.input(1));
  const ConstTensor* bias = producer.input_size() > 2 ? constant_of(state, producer.input(2)) : nullptr;
  if (!weight || !weight->is_float() || (producer.input_size() > 2 && !producer.input(2).empty() && !bias)) return false;
  const int axis = channel_axis(producer, *weight);
  if (axis < 0) return false;
  const std::int64_t channels = weight->shape[static_cast<std::size_t>(axis)];
  const ConstTensor* params[4];
  for (int k = 0; k < 4; ++k) {
    params[k] = constant_of(state, bn.input(k + 1));
    if (!params[k] || params[k]->numel() != channels) return false;
  }
  const bool gemm = producer.op_type() == "Gemm";
  const double beta = gemm ? float_attr(producer, "beta", 1.0f) : 1.0;
  if (bias && bias->numel() != channels && !(gemm && bias->numel() == 1)) return false;
  const double eps = float_attr(bn, "epsilon", 1e-5f);

  std::vector<double> s(static_cast<std::size_t>(channels));
  ConstTensor new_bias = make_float_tensor({channels}, std::vector<float>(s.size()), weight->onnx_type);
  for (std::size_t c = 0; c < s.size(); ++c) {
    s[c] = params[0]->at(c) / std::sqrt(params[3]->at(c) + eps);
    const double b = bias ? beta * bias->at(bias->numel() == 1 ? 0 : c) : 0.0;
    new_bias.floats[c] = round_to_onnx_float((b - params[2]->at(c)) * s[c] + params[1]->at(c), weight->onnx_type);
  }
  ConstTensor new_weight = *weight;
  const std::int64_t inner = [&] {
    std::int64_t n = 1;
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < weight->shape.size(); ++d) n *= weight->shape[d];
    return n;
  }();
  for (std::size_t i = 0; i < new_weight.floats.size(); ++i) {
    const auto c = static_cast<std::size_t>((static_cast<std::int64_t>(i) / inner) % channels);
    new_weight.floats[i] = round_to_onnx_float(new_weight.floats[i] * s[c], weight->onnx_type);
  }

  const std::string weight_name = fresh_name(state, producer.input(1) + "/bn_folded");
  state.values[weight_name] = OnnxValue{std::make_shared<const ConstTensor>(std::move(new_weight)), Tensor{}, false};
  const std::string bias_name = fresh_name(state, bn.name().empty() ? producer.output(0) + "/bn_bias" : bn.name() + "/bias");
  state.values[bias_name] = OnnxValue{std::make_shared<const ConstTensor>(std::move(new_bias)), Tensor{}, false};
  producer.set_input(1, weight_name);
  while (producer.input_size() < 3) producer.add_input("");
  producer.set_input(2, bias_name);
  if (gemm) set_float_attr(producer, "beta", 1.0f);
  state.uses[weight_name] = 1;
  state.uses[bias_name] = 1;
  producer.set_output(0, bn.output(0));
  return true;
}

}  // namespace

Result<int> fold_batch_norms(std::vector<onnx::NodeProto>& nodes, ImportState& state) {
  std::map<std::string, std::size_t> producer_of;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& out : nodes[i].output()) producer_of[out] = i;
  std::vector<bool> erase(nodes.size(), false);
  int folded = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const onnx::NodeProto& bn = nodes[i];
    if (bn.op_type() != "BatchNormalization" || !(bn.domain().empty() || bn.domain() == "ai.onnx") || bn.input_size() == 0)
      continue;
    auto it = producer_of.find(bn.input(0));
    if (it == producer_of.end()) continue;
    const std::string& op = nodes[it->second].op_type();
    if (op != "Conv" && op != "ConvTranspose" && op != "Gemm") continue;
    VKFUSE_ASSIGN_OR_RETURN(const bool done, try_fold(nodes, i, it->second, state));
    if (done) {
      erase[i] = true;
      ++folded;
    }
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (!erase[i]) {
      if (kept != i) nodes[kept] = std::move(nodes[i]);
      ++kept;
    }
  nodes.resize(kept);
  return folded;
}

}  // namespace vkfuse::onnx_import
