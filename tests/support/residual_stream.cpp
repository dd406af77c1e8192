#include "support/residual_stream.h"

#include <doctest/doctest.h>

#include <vector>

namespace vkfuse::testing {

Graph build_residual_stream(std::int64_t channels, std::int64_t height, std::int64_t width, int blocks) {
  using Ints = std::vector<std::int64_t>;
  GraphBuilder b;
  const std::int64_t c = channels;
  const Tensor dw = b.input("dw", {c, 1, 3, 3}), w = b.input("w", {c, c}), s = b.input("s", {c, 1, 1});
  Tensor x = b.input("x", {1, c, height, width});
  for (int i = 0; i < blocks; ++i) {
    const Tensor d = b.op("Conv", {x, dw}, {{"pads", Ints{1, 1, 1, 1}}, {"group", static_cast<float>(c)}});
    const Tensor m = b.op("MatMul", {b.op("Transpose", {d}, {{"perm", Ints{0, 2, 3, 1}}}), w});
    x = b.op("Add", {x, b.op("Mul", {b.op("Transpose", {m}, {{"perm", Ints{0, 3, 1, 2}}}), s})});
  }
  b.output(x, "y");
  auto graph = b.build();
  REQUIRE_MESSAGE(graph.ok(), graph.status().to_string());
  return std::move(graph).value();
}

}  // namespace vkfuse::testing
