// The debug switches of the README: VKFUSE_DISABLE_FUSION and VKFUSE_DUMP_DIR.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>

#include "host/demo_models.h"
#include "support/gpu_context.h"

namespace vkfuse::testing {

TEST_CASE("VKFUSE_DISABLE_FUSION=1 gives one dispatch per op whatever the options say") {
  auto graph = build_elementwise_chain(1000, 6);
  REQUIRE(graph.ok());
  ::setenv("VKFUSE_DISABLE_FUSION", "1", 1);
  auto unfused = Session::create(gpu_context(), *graph, {});
  ::unsetenv("VKFUSE_DISABLE_FUSION");
  auto fused = Session::create(gpu_context(), *graph, {});
  REQUIRE(unfused.ok());
  REQUIRE(fused.ok());
  CHECK_FALSE(unfused->fusion_enabled());
  CHECK(unfused->dispatch_count() == 6);
  CHECK(fused->fusion_enabled());
  CHECK(fused->dispatch_count() == 1);
}

TEST_CASE("VKFUSE_DUMP_DIR receives each group's GLSL, SPIR-V disassembly and log") {
  const auto dir = std::filesystem::temp_directory_path() / ("vkfuse-dump-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("VKFUSE_DUMP_DIR", dir.c_str(), 1);
  GraphBuilder b;
  const Tensor x = b.input("x", {64});
  b.output(b.op("Sqrt", {b.op("Abs", {b.op("Sin", {x})})}), "y");  // a kernel no other test makes
  auto graph = b.build();
  REQUIRE(graph.ok());
  auto session = Session::create(gpu_context(), *graph, {});
  ::unsetenv("VKFUSE_DUMP_DIR");
  REQUIRE(session.ok());
  int comp = 0, spvasm = 0, log = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("Sin_Abs_Sqrt-", 0) != 0) continue;
    comp += entry.path().extension() == ".comp";
    spvasm += entry.path().extension() == ".spvasm";
    log += entry.path().extension() == ".log";
    if (entry.path().extension() == ".spvasm") CHECK(std::filesystem::file_size(entry.path()) > 100);
  }
  CHECK(comp == 1);
  CHECK(spvasm == 1);
  CHECK(log == 1);
  std::filesystem::remove_all(dir);
}

}  // namespace vkfuse::testing
