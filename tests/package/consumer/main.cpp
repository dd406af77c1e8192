// A program outside vkfuse that uses it as a package: loads tests/data/models/tiny_cnn, runs it and
// checks the output against the reference (argv[1] is tests/data/models/tiny_cnn).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <vkfuse/onnx.hpp>
#include <vkfuse/tensor_io.hpp>
#include <vkfuse/vkfuse.hpp>

template <class T>
static T check(vkfuse::Result<T> result, const char* what) {
  if (!result.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, result.status().to_string().c_str());
    std::exit(1);
  }
  return std::move(result).value();
}

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: consumer MODEL_DIR\n"), 2;
  const std::string dir = argv[1];
  vkfuse::Graph graph = check(vkfuse::load_onnx(dir + "/model.onnx"), "load");
  vkfuse::HostTensor input = check(vkfuse::read_tensor_file(dir + "/input.npy"), "input");
  vkfuse::HostTensor reference = check(vkfuse::read_tensor_file(dir + "/output.npy"), "reference");
  vkfuse::ContextOptions context_options;
  context_options.cache_dir = "";
  vkfuse::Context context = check(vkfuse::Context::create(context_options), "context");
  vkfuse::Session session = check(vkfuse::Session::create(context, graph, {}), "session");
  auto outputs = check(session.run({{graph.inputs()[0].name, input}}), "run");
  const std::vector<float> got = outputs.at(graph.outputs()[0].name).to_floats();
  const std::vector<float> want = reference.to_floats();
  if (got.size() != want.size()) return std::fprintf(stderr, "%zu outputs, %zu in the reference\n", got.size(), want.size()), 1;
  double worst = 0.0, largest = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    largest = std::max(largest, std::fabs(double(want[i])));
  }
  std::printf("vkfuse %s, tiny_cnn on %s: %zu dispatches, worst difference %.3g of %.3g\n", vkfuse::version(),
              context.device().name.c_str(), session.dispatch_count(), worst, largest);
  if (worst > 1e-4 * largest) return std::fprintf(stderr, "tiny_cnn does not match its reference\n"), 1;
  std::printf("tiny_cnn matches its reference\n");
  return 0;
}
