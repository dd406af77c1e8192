#include "host/passes/fold_layer_norm.h"

#include <cstring>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "host/group_kernel.h"
#include "host/op_registry.h"
#include "host/parallel_for.h"
#include "host/shape_inference.h"

namespace vkfuse {
namespace {

// One LayerNorm -> MatMul [-> Add] to fold.
struct Match {
  ValueId x = -1;
  ValueId gamma = -1, beta = -1;  // beta: -1 where the LayerNorm has no bias
  ValueId weight = -1, bias = -1;  // bias: -1 where no Add follows the MatMul
  float epsilon = 0.0f;
  NodeId view = kNoNode;        // a view between the LayerNorm and the MatMul that keeps rows whole
  NodeId last = kNoNode;        // the MatMul, or the Add after it: LayerNormMatMul takes its place
  std::vector<NodeId> removed;  // the other nodes
};

class Matcher {
 public:
  explicit Matcher(const GraphIR& graph) : g_(graph) {}

  std::optional<Match> match(NodeId matmul) const {
    const Node& mm = g_.node(matmul);
    if (!is(mm, "MatMul")) return std::nullopt;
    Match m;
    m.weight = mm.inputs[1];
    const Value& w = g_.value(m.weight);
    if (!f32_constant(m.weight) || w.shape.size() != 2) return std::nullopt;
    const std::int64_t k = w.shape[0], n = w.shape[1];
    // Backwards from the MatMul's left operand: [Add(beta)] <- Mul(gamma) <- Div(d, std).
    ValueId a = mm.inputs[0];
    NodeId q = producer_only_for(a, matmul);
    if (q == kNoNode) return std::nullopt;
    std::vector<NodeId>& chain = m.removed;
    if (g_.node(q).op->kind == OpKind::kView) {
      // LN(x) seen through a view that moves whole rows (vit_b_16's [1, 197, 768] -> [197, 1, 768]) is
      // LN of x seen through it: the product reads x through the same view.
      if (!keeps_rows(a, k)) return std::nullopt;
      m.view = q;
      chain.push_back(q);
      a = g_.node(q).inputs[0];
      q = producer_only_for(a, m.view);
      if (q == kNoNode) return std::nullopt;
    }
    if (is(g_.node(q), "Add")) {
      if (!constant_operand(q, k, m.beta, a)) return std::nullopt;
      chain.push_back(q);
      q = producer_only_for(a, q);
      if (q == kNoNode) return std::nullopt;
    }
    if (!is(g_.node(q), "Mul") || !constant_operand(q, k, m.gamma, a)) return std::nullopt;
    chain.push_back(q);
    const NodeId divide = producer_only_for(a, q);
    if (divide == kNoNode || !is(g_.node(divide), "Div")) return std::nullopt;
    chain.push_back(divide);
    const ValueId centered = g_.node(divide).inputs[0];
    const NodeId sqrt = producer_only_for(g_.node(divide).inputs[1], divide);
    if (sqrt == kNoNode || !is(g_.node(sqrt), "Sqrt")) return std::nullopt;
    const NodeId add_epsilon = producer_only_for(g_.node(sqrt).inputs[0], sqrt);
    ValueId variance = -1;
    if (add_epsilon == kNoNode || !is(g_.node(add_epsilon), "Add") || !scalar_operand(add_epsilon, m.epsilon, variance))
      return std::nullopt;
    const NodeId reduce_variance = producer_only_for(variance, add_epsilon);
    if (reduce_variance == kNoNode || !last_axis_mean(reduce_variance)) return std::nullopt;
    const NodeId square = producer_only_for(g_.node(reduce_variance).inputs[0], reduce_variance);
    if (square == kNoNode || !is(g_.node(square), "Mul") || g_.node(square).inputs[0] != centered ||
        g_.node(square).inputs[1] != centered)
      return std::nullopt;
    // The centered value: read by the square and the Div alone.
    const NodeId subtract = g_.value(centered).producer;
    if (subtract == kNoNode || !is(g_.node(subtract), "Sub") || !read_only_by(centered, {square, divide}))
      return std::nullopt;
    m.x = g_.node(subtract).inputs[0];
    const NodeId reduce_mean = producer_only_for(g_.node(subtract).inputs[1], subtract);
    if (reduce_mean == kNoNode || !last_axis_mean(reduce_mean) || g_.node(reduce_mean).inputs[0] != m.x) return std::nullopt;
    const Value& x = g_.value(m.x);
    // (LayerNormMatMul reads a matrix: x, or the view of it, of rank 2 or more.)
    const Shape& read = m.view != kNoNode ? g_.value(mm.inputs[0]).shape : x.shape;
    if (x.dtype != DType::kF32 || x.shape.empty() || x.shape.back() != k || read.size() < 2 ||
        (m.view != kNoNode && g_.is_view(m.x)))
      return std::nullopt;
    chain.insert(chain.end(), {sqrt, add_epsilon, reduce_variance, square, subtract, reduce_mean});
    m.last = matmul;
    // A bias Add after the MatMul folds into Bias'.
    const Value& product = g_.value(mm.output);
    if (!product.is_output && product.consumers.size() == 1) {
      const NodeId add = product.consumers[0];
      ValueId other = -1;
      ValueId bias = -1;
      if (is(g_.node(add), "Add") && constant_operand(add, n, bias, other) && other == mm.output &&
          g_.value(g_.node(add).output).shape == product.shape) {
        m.bias = bias;
        m.removed.push_back(matmul);
        m.last = add;
      }
    }
    return m;
  }

 private:
  static bool is(const Node& node, std::string_view op) { return node.op->name == op; }

  bool f32_constant(ValueId v) const { return g_.value(v).constant != nullptr && g_.value(v).dtype == DType::kF32; }

  // The node computing v where `reader` is v's one reader and v is no graph output; else kNoNode.
  NodeId producer_only_for(ValueId v, NodeId reader) const {
    return read_only_by(v, {reader}) ? g_.value(v).producer : kNoNode;
  }

  bool read_only_by(ValueId v, const std::set<NodeId>& readers) const {
    const Value& value = g_.value(v);
    if (value.is_output) return false;
    for (NodeId c : value.consumers)
      if (!readers.count(c)) return false;
    return true;
  }

  // Binary node q with one f32 constant operand of `length` elements along the last axis (shape [length]
  // or [1, ..., length]); `constant` gets it and `other` the other operand.
  bool constant_operand(NodeId q, std::int64_t length, ValueId& constant, ValueId& other) const {
    const Node& node = g_.node(q);
    for (int side = 0; side < 2; ++side) {
      const ValueId c = node.inputs[static_cast<std::size_t>(side)];
      if (!f32_constant(c) || g_.value(c).shape.empty() || g_.value(c).shape.back() != length ||
          shape_numel(g_.value(c).shape) != length)
        continue;
      constant = c;
      other = node.inputs[static_cast<std::size_t>(1 - side)];
      return g_.value(other).constant == nullptr;
    }
    return false;
  }

  // Add node q of a one-element f32 constant (`value`) and `other`.
  bool scalar_operand(NodeId q, float& value, ValueId& other) const {
    const Node& node = g_.node(q);
    const ValueId c = node.inputs[1];
    if (!f32_constant(c) || shape_numel(g_.value(c).shape) != 1) return false;
    value = g_.value(c).constant->to_floats()[0];
    other = node.inputs[0];
    return true;
  }

  // Whether view v (of one stored tensor, rows of k) keeps each row of k whole and contiguous.
  bool keeps_rows(ValueId v, std::int64_t k) const {
    const ValueId base = g_.node(g_.value(v).producer).inputs[0];
    auto view = resolve_view(g_, v);
    return !g_.is_view(base) && view.ok() && view->base == base && !view->layout.shape.empty() &&
           view->layout.shape.back() == k && view->layout.strides.back() == 1 && g_.value(base).shape.back() == k;
  }

  // A ReduceMean over the last axis that keeps it.
  bool last_axis_mean(NodeId q) const {
    const Node& node = g_.node(q);
    const std::size_t rank = g_.value(node.inputs[0]).shape.size();
    return is(node, "ReduceMean") && rank > 0 && reduce_first_axis(node, rank) == static_cast<int>(rank) - 1 &&
           reduce_keepdims(node);
  }

  const GraphIR& g_;
};

// The folded constants of `m`: W' = diag(gamma) W, C = column sums of W', Bias' = beta W + bias.
struct FoldedConstants {
  HostTensor weight, sums, bias;
};

FoldedConstants fold_constants(const GraphIR& g, const Match& m) {
  const Shape& w_shape = g.value(m.weight).shape;
  const std::int64_t k = w_shape[0], n = w_shape[1];
  const std::vector<float> gamma = g.value(m.gamma).constant->to_floats();
  const std::vector<float> beta = m.beta >= 0 ? g.value(m.beta).constant->to_floats() : std::vector<float>(k, 0.0f);
  const std::vector<float> bias = m.bias >= 0 ? g.value(m.bias).constant->to_floats() : std::vector<float>(n, 0.0f);
  // W row by row, straight from its bytes (f32) into W''s: no whole-matrix float copies.
  const std::byte* w = g.value(m.weight).constant->bytes.data();
  HostTensor scaled{w_shape, DType::kF32, std::vector<std::byte>(static_cast<std::size_t>(k * n) * sizeof(float))};
  std::vector<float> row(static_cast<std::size_t>(n));
  std::vector<double> sums(static_cast<std::size_t>(n), 0.0), shifted(bias.begin(), bias.end());
  const std::size_t row_bytes = row.size() * sizeof(float);
  for (std::int64_t r = 0; r < k; ++r) {
    std::memcpy(row.data(), w + static_cast<std::size_t>(r) * row_bytes, row_bytes);
    const float g_r = gamma[static_cast<std::size_t>(r)];
    const double b_r = beta[static_cast<std::size_t>(r)];
    for (std::size_t c = 0; c < row.size(); ++c) {
      shifted[c] += b_r * row[c];
      row[c] *= g_r;
      sums[c] += row[c];
    }
    std::memcpy(scaled.bytes.data() + static_cast<std::size_t>(r) * row_bytes, row.data(), row_bytes);
  }
  const auto to_f32 = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  return {std::move(scaled), HostTensor::from_floats({n}, to_f32(sums)), HostTensor::from_floats({n}, to_f32(shifted))};
}

// Whether LayerNormMatMul reads x as it lies (a view in place, as MatMul reads its left operand).
// (Through the match's view, x's layout is the view's over the LayerNorm's result: x is stored.)
bool reads_as_it_lies(const GraphIR& g, const OpDef& op, const Match& m) {
  const ValueId read = m.view != kNoNode ? g.node(m.view).output : m.x;
  if (!g.is_view(read)) return true;
  const std::int64_t n = g.value(m.weight).shape[1];
  const std::vector<TensorInfo> infos = {view_info(g, read), {g.value(m.weight).shape, DType::kF32},
                                         {{n}, DType::kF32}, {{n}, DType::kF32}};
  return !infos[0].strides.empty() ? op.reads_in_place(infos, 0) : true;
}

}  // namespace

std::optional<FoldedLayerNorms> fold_layer_norms(const GraphIR& graph) {
  const OpDef* op = find_op("LayerNormMatMul");
  const Matcher matcher(graph);
  std::map<NodeId, Match> by_last;
  std::set<NodeId> removed;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes.size()); ++n)
    if (auto m = matcher.match(n); m && reads_as_it_lies(graph, *op, *m)) {
      removed.insert(m->removed.begin(), m->removed.end());
      by_last.emplace(m->last, std::move(*m));
    }
  if (by_last.empty()) return std::nullopt;

  // The values the folded graph keeps: the graph's inputs and outputs and what its nodes read and compute.
  std::vector<bool> kept(graph.values.size(), false);
  for (ValueId v : graph.inputs) kept[static_cast<std::size_t>(v)] = true;
  for (ValueId v : graph.outputs) kept[static_cast<std::size_t>(v)] = true;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes.size()); ++n) {
    if (removed.count(n)) continue;
    const Node& node = graph.node(n);
    kept[static_cast<std::size_t>(node.output)] = true;
    if (auto it = by_last.find(n); it != by_last.end()) {
      kept[static_cast<std::size_t>(it->second.x)] = true;
      continue;
    }
    for (ValueId v : node.inputs) kept[static_cast<std::size_t>(v)] = true;
  }
  FoldedLayerNorms out;
  GraphIR& f = out.graph;
  f.source_op_count = graph.source_op_count;
  std::vector<ValueId> id(graph.values.size(), -1);
  for (std::size_t v = 0; v < graph.values.size(); ++v) {
    if (!kept[v]) continue;
    id[v] = static_cast<ValueId>(f.values.size());
    Value value = graph.values[v];
    value.consumers.clear();
    f.values.push_back(std::move(value));
  }
  const auto add_constant = [&f](HostTensor data, std::string name) { return vkfuse::add_constant(f, std::move(data), std::move(name)); };
  const auto append = [&f](Node node) { append_node(f, std::move(node)); };
  // The folded constants, a few matches at a time (vit_b_16: 24 of up to 768 x 3072).
  std::vector<const Match*> matches;
  std::map<NodeId, FoldedConstants> folded;  // by the node LayerNormMatMul replaces
  for (const auto& [last, m] : by_last) {
    matches.push_back(&m);
    folded[last];
  }
  (void)parallel_for(matches.size(), compile_thread_count(), [&](std::size_t i) -> Status {
    folded.at(matches[i]->last) = fold_constants(graph, *matches[i]);
    return {};
  });
  for (NodeId n = 0; n < static_cast<NodeId>(graph.nodes.size()); ++n) {
    if (removed.count(n)) continue;
    Node node = graph.node(n);
    if (auto it = by_last.find(n); it != by_last.end()) {
      const Match& m = it->second;
      FoldedConstants& c = folded.at(n);
      ValueId x = id[static_cast<std::size_t>(m.x)];
      if (m.view != kNoNode) {  // the view again, over x
        Node view = graph.node(m.view);
        Value seen = graph.value(view.output);
        seen.name += "/of_x";
        seen.consumers.clear();
        f.values.push_back(std::move(seen));
        view.name += "/of_x";
        view.inputs = {x};
        view.output = x = static_cast<ValueId>(f.values.size() - 1);
        append(std::move(view));
      }
      node.op = op;
      node.inputs = {x, -1, -1, -1};
      node.attrs = {m.epsilon};
      node.lists = {};
      node.inputs[1] = add_constant(std::move(c.weight), node.name + "/folded_weight");
      node.inputs[2] = add_constant(std::move(c.sums), node.name + "/folded_column_sums");
      node.inputs[3] = add_constant(std::move(c.bias), node.name + "/folded_bias");
      ++out.folded;
    } else {
      for (ValueId& v : node.inputs) v = id[static_cast<std::size_t>(v)];
    }
    node.output = id[static_cast<std::size_t>(node.output)];
    append(std::move(node));
  }
  for (ValueId v : graph.inputs) f.inputs.push_back(id[static_cast<std::size_t>(v)]);
  for (ValueId v : graph.outputs) f.outputs.push_back(id[static_cast<std::size_t>(v)]);
  return out;
}

const GraphIR& graph_to_plan(const GraphIR& graph, FusionMode mode, std::optional<FoldedLayerNorms>& holder) {
  holder = mode == FusionMode::kFused ? fold_layer_norms(graph) : std::nullopt;
  return holder ? holder->graph : graph;
}

}  // namespace vkfuse
