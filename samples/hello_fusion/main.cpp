// hello_fusion: build a small graph in C++, run it fused on the GPU, read the result.
#include <cstdio>
#include <vector>

#include <vkfuse/vkfuse.hpp>

int main() {
  vkfuse::GraphBuilder b;
  const vkfuse::Tensor x = b.input("x", {2, 4});
  const vkfuse::Tensor bias = b.input("bias", {4});  // broadcast over the rows
  const vkfuse::Tensor y = b.op("Sigmoid", {b.op("Add", {b.op("Mul", {x, b.scalar(2.0f)}), bias})});
  b.output(y, "y");
  auto graph = b.build();  // shape errors name the node and both shapes
  if (!graph.ok()) return std::fprintf(stderr, "%s\n", graph.status().to_string().c_str()), 1;

  auto context = vkfuse::Context::create({});  // VKFUSE_DEVICE picks the device
  if (!context.ok()) return std::fprintf(stderr, "%s\n", context.status().to_string().c_str()), 1;
  auto session = vkfuse::Session::create(*context, *graph, {});  // plan, compile, record once
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().to_string().c_str()), 1;

  auto outputs = session->run({{"x", vkfuse::HostTensor::from_floats({2, 4}, {0, 1, 2, 3, -1, -2, -3, -4})},
                               {"bias", vkfuse::HostTensor::from_floats({4}, {0.5f, 0, 0, -0.5f})}});
  if (!outputs.ok()) return std::fprintf(stderr, "%s\n", outputs.status().to_string().c_str()), 1;

  std::printf("%zu ops ran as %zu dispatch(es) on %s\ny =", graph->node_count(), session->dispatch_count(),
              context->device().name.c_str());
  for (float v : outputs->at("y").to_floats()) std::printf(" %.4f", v);
  std::printf("\n");
  return 0;
}
