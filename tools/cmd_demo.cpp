// vkfuse demo: the embedded default models, fused and unfused, checked against the CPU reference.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include <vkfuse/vkfuse.hpp>

#include "commands.h"
#include "host/demo_models.h"
#include "host/reference_eval.h"

namespace vkfuse::cli {
namespace {

struct RunReport {
  std::size_t dispatches = 0;
  double gpu_ms = 0.0;
  double max_abs_error = 0.0;
  std::vector<GroupInfo> groups;
};

double max_error(const std::map<std::string, HostTensor>& got, const std::map<std::string, HostTensor>& want) {
  double worst = 0.0;
  for (const auto& [name, tensor] : want) {
    const std::vector<float> a = tensor.to_floats(), b = got.at(name).to_floats();
    for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
  }
  return worst;
}

Result<RunReport> run_once(const Context& context, const Graph& graph, bool fusion,
                           const std::map<std::string, HostTensor>& inputs,
                           const std::map<std::string, HostTensor>& reference) {
  VKFUSE_ASSIGN_OR_RETURN(Session session, Session::create(context, graph, {fusion, true}));
  RunReport report;
  // The first run warms caches and clocks; report the second.
  for (int i = 0; i < 2; ++i) {
    VKFUSE_ASSIGN_OR_RETURN(auto outputs, session.run(inputs));
    report.max_abs_error = max_error(outputs, reference);
  }
  report.dispatches = session.dispatch_count();
  report.gpu_ms = session.last_gpu_ms();
  report.groups = session.groups();
  return report;
}

Status demo_model(const Context& context, const char* title, const Graph& graph,
                  const std::map<std::string, HostTensor>& inputs) {
  VKFUSE_ASSIGN_OR_RETURN(auto reference, evaluate_reference(graph, inputs));
  std::printf("\n== %s: %zu ops\n", title, graph.node_count());
  VKFUSE_ASSIGN_OR_RETURN(RunReport fused, run_once(context, graph, true, inputs, reference));
  VKFUSE_ASSIGN_OR_RETURN(RunReport unfused, run_once(context, graph, false, inputs, reference));
  std::printf("fused groups:\n");
  for (std::size_t g = 0; g < fused.groups.size(); ++g) {
    const GroupInfo& info = fused.groups[g];
    std::string label = info.label;
    if (label.size() > 96) label = label.substr(0, 93) + "...";
    std::printf("  [%zu] %zu ops, %zu in, %zu out, %.3f ms: %s\n", g, info.op_count, info.inputs, info.outputs,
                info.gpu_ms, label.c_str());
  }
  std::printf("  %-8s %10s %14s %12s\n", "", "dispatches", "max abs error", "GPU ms");
  std::printf("  %-8s %10zu %14.3g %12.4f\n", "fused", fused.dispatches, fused.max_abs_error, fused.gpu_ms);
  std::printf("  %-8s %10zu %14.3g %12.4f\n", "unfused", unfused.dispatches, unfused.max_abs_error, unfused.gpu_ms);
  if (fused.gpu_ms > 0.0) std::printf("  unfused / fused GPU time: %.2fx\n", unfused.gpu_ms / fused.gpu_ms);
  return {};
}

int run_demo(std::int64_t batch, std::int64_t boxes) {
  auto fail = [](const Status& status) {
    std::fprintf(stderr, "vkfuse demo: %s\n", status.to_string().c_str());
    return 1;
  };
  auto context = Context::create({});
  if (!context.ok()) return fail(context.status());
  const DeviceSummary device = context->device();
  std::printf("device: %s (%s, %s, Vulkan %s)\n", device.name.c_str(), device.type.c_str(), device.driver.c_str(),
              device.api_version.c_str());

  auto giou = build_giou_loss_graph(batch, boxes);
  if (!giou.ok()) return fail(giou.status());
  if (Status s = demo_model(*context, "GIoU loss", *giou, make_giou_inputs(batch, boxes, 7)); !s.ok()) return fail(s);

  const std::int64_t numel = 1 << 20;
  auto chain = build_elementwise_chain(numel, 12);
  if (!chain.ok()) return fail(chain.status());
  if (Status s = demo_model(*context, "elementwise chain over 1 Mi floats", *chain, make_chain_inputs(numel, 11)); !s.ok())
    return fail(s);

  const CacheStats cache = context->cache_stats();
  std::printf("\nkernel cache: %u compiled, %u from disk, %u from memory\n", cache.compiles, cache.disk_hits,
              cache.memory_hits);
  return 0;
}

}  // namespace

Command add_demo(CLI::App& root) {
  struct Flags {
    int batch = 8, boxes = 256;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* app = root.add_subcommand("demo", "the embedded demo graphs, fused and unfused, against the CPU reference");
  app->add_option("--batch", flags->batch, "N, the batch (default 8)")->type_name("N")->check(positive_integer());
  app->add_option("--boxes", flags->boxes, "boxes per batch item (default 256)")->type_name("N")->check(positive_integer());
  return {app, [flags] { return run_demo(flags->batch, flags->boxes); }};
}

}  // namespace vkfuse::cli
