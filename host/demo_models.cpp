#include "host/demo_models.h"

#include <random>

namespace vkfuse {

Result<Graph> build_giou_loss_graph(std::int64_t batch, std::int64_t boxes) {
  GraphBuilder b;
  const Tensor pred = b.input("pred", {batch, boxes, 4});
  const Tensor target = b.input("target", {batch, boxes, 4});
  auto coord = [&](Tensor t, int c, const std::string& name) {
    return b.op("Slice", {t}, {{"axis", 2}, {"start", static_cast<float>(c)}, {"end", static_cast<float>(c + 1)}}, name);
  };
  const Tensor px1 = coord(pred, 0, "px1"), py1 = coord(pred, 1, "py1"), px2 = coord(pred, 2, "px2"),
               py2 = coord(pred, 3, "py2");
  const Tensor tx1 = coord(target, 0, "tx1"), ty1 = coord(target, 1, "ty1"), tx2 = coord(target, 2, "tx2"),
               ty2 = coord(target, 3, "ty2");
  auto op = [&](const char* type, std::vector<Tensor> in) { return b.op(type, in); };
  const Tensor eps = b.scalar(1e-7f);

  const Tensor area_p = op("Mul", {op("Sub", {px2, px1}), op("Sub", {py2, py1})});
  const Tensor area_t = op("Mul", {op("Sub", {tx2, tx1}), op("Sub", {ty2, ty1})});
  const Tensor iw = op("Relu", {op("Sub", {op("Min", {px2, tx2}), op("Max", {px1, tx1})})});
  const Tensor ih = op("Relu", {op("Sub", {op("Min", {py2, ty2}), op("Max", {py1, ty1})})});
  const Tensor inter = op("Mul", {iw, ih});
  const Tensor uni = op("Add", {op("Sub", {op("Add", {area_p, area_t}), inter}), eps});
  const Tensor iou = op("Div", {inter, uni});
  const Tensor cw = op("Sub", {op("Max", {px2, tx2}), op("Min", {px1, tx1})});
  const Tensor ch = op("Sub", {op("Max", {py2, ty2}), op("Min", {py1, ty1})});
  const Tensor c_area = op("Add", {op("Mul", {cw, ch}), eps});
  const Tensor giou = op("Sub", {iou, op("Div", {op("Sub", {c_area, uni}), c_area})});
  const Tensor loss = op("Sub", {b.scalar(1.0f), giou});
  const Tensor valid = op("And", {op("Greater", {tx2, tx1}), op("Greater", {ty2, ty1})});
  const Tensor mask = b.op("Cast", {valid}, {{"to", static_cast<float>(DType::kF32)}});
  const Tensor total = b.op("ReduceSum", {op("Mul", {loss, mask})}, {{"keepdims", 0}});
  const Tensor count = b.op("ReduceSum", {mask}, {{"keepdims", 0}});
  const Tensor mean = op("Div", {total, op("Max", {count, b.scalar(1.0f)})});
  b.output(mean, "loss");
  return b.build();
}

std::map<std::string, HostTensor> make_giou_inputs(std::int64_t batch, std::int64_t boxes, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> pos(0.0f, 100.0f), size(1.0f, 30.0f), jitter(-4.0f, 4.0f);
  const std::size_t count = static_cast<std::size_t>(batch * boxes);
  std::vector<float> pred(count * 4), target(count * 4);
  for (std::size_t i = 0; i < count; ++i) {
    const float x = pos(rng), y = pos(rng), w = size(rng), h = size(rng);
    float* t = &target[i * 4];
    t[0] = x, t[1] = y, t[2] = x + w, t[3] = y + h;
    if (rng() % 8 == 0) t[2] = x - 1.0f;  // an invalid (padding) target
    float* p = &pred[i * 4];
    p[0] = x + jitter(rng), p[1] = y + jitter(rng), p[2] = x + w + jitter(rng), p[3] = y + h + jitter(rng);
  }
  return {{"pred", HostTensor::from_floats({batch, boxes, 4}, pred)},
          {"target", HostTensor::from_floats({batch, boxes, 4}, target)}};
}

Result<Graph> build_elementwise_chain(std::int64_t numel, int ops, bool identity) {
  GraphBuilder b;
  Tensor x = b.input("x", {numel});
  if (identity) {
    b.output(b.op("Identity", {x}), "y");
    return b.build();
  }
  // A cycle of 8 ops that keeps every output dependent on x and within [-4, 4] (no op can be folded
  // away by a driver's compiler: that would fake bandwidth in the benchmark).
  static const char* kBinary[] = {"Mul", "Add", "Max", "Sub", "Min"};
  static const float kConstants[] = {1.0009765625f, 0.25f, -3.0f, 0.125f, 3.0f};
  for (int i = 0; i < ops; ++i) {
    const int k = i % 8;
    if (k < 5) x = b.op(kBinary[k], {x, b.scalar(kConstants[k])});
    else if (k == 5) x = b.op("Neg", {x});
    else if (k == 6) x = b.op("Abs", {x});
    else x = b.op("Add", {x, b.scalar(-1.0f)});
  }
  b.output(x, "y");
  return b.build();
}

std::map<std::string, HostTensor> make_chain_inputs(std::int64_t numel, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  std::vector<float> x(static_cast<std::size_t>(numel));
  for (float& v : x) v = dist(rng);
  return {{"x", HostTensor::from_floats({numel}, x)}};
}

}  // namespace vkfuse
