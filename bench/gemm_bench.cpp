// GEMM benchmark: one MatMul node, C[m, n] = A[m, k] * B[k, n], for square sizes n (m = n = k) or
// MxNxK shapes, in f32 and/or f16 storage (fp32 accumulation either way). GPU time from Vulkan
// timestamps around back-to-back replays of the recorded dispatch; median of the runs; TFLOP/s counts
// 2 m n k flops. Also prints the blocking
// the launcher chose for the device and the worst relative error of a few output elements against a
// CPU dot product, so a fast wrong kernel does not go unnoticed. Not a test: it asserts nothing.
// --tiles measures each listed blocking of roots/gemm_tiled.glsl (force_gemm_tile) or, for f16 on a
// device with cooperative matrices, of roots/gemm_coopmat.glsl (force_coopmat_tile) instead of the
// launcher's choice, e.g. to compare 128x128x8 with 128x128x16 on one GPU; "auto" is the choice.
//
//   vkfuse_bench_gemm [--sizes 1024,2048,197x768x3072,...] [--dtype f32|f16|both] [--runs 5] [--min-iterations 3]
//                     [--tiles auto,128x128x16:8x8,32x32x32:4x4/4,64x64x16:8x8+4,...]
//                     (bm x bn x bk : tm x tn [/ split K inside the workgroup] [+ workgroups per tile];
//                      cm tile x bk [/ subgroups along K] [+ workgroups per tile] [@ subgroups down x across,
//                      2x2 unless given]:
//                      cooperative matrices, f16)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "bench_args.h"
#include "bench_timing.h"
#include "host/context_impl.h"
#include "host/ops/kernel_support.h"

namespace {

using namespace vkfuse;

using bench::arg;
using bench::parse_items;
using bench::split;

// Takes "<mark><number>" off the front of `rest` into `value` where it starts with `mark`; false where
// it starts with `mark` but no number follows.
bool take_suffix(std::string& rest, char mark, unsigned& value) {
  if (rest.empty() || rest[0] != mark) return true;
  int used = 0;
  const char format[] = {mark, '%', 'u', '%', 'n', '\0'};
  if (std::sscanf(rest.c_str(), format, &value, &used) != 1) return false;
  rest = rest.substr(static_cast<std::size_t>(used));
  return true;
}

// "128x128x16:8x8" or "32x32x32:4x4/4" (split K) -> the tile; "auto" -> none (the launcher's choice);
// std::nullopt for anything else.
std::optional<std::optional<GemmTile>> parse_tile(const std::string& text) {
  if (text == "auto") return std::optional<GemmTile>();
  unsigned bm = 0, bn = 0, bk = 0, tm = 0, tn = 0, slices = 1, groups = 1;
  int used = 0;
  if (std::sscanf(text.c_str(), "%ux%ux%u:%ux%u%n", &bm, &bn, &bk, &tm, &tn, &used) != 5) return std::nullopt;
  std::string rest = text.substr(static_cast<std::size_t>(used));
  if (!take_suffix(rest, '/', slices) || !take_suffix(rest, '+', groups) || !rest.empty()) return std::nullopt;
  return std::optional<GemmTile>(GemmTile{bm, bn, bk, tm, tn, slices, groups});
}

// "cm32x128/4" (a roots/gemm_coopmat.glsl tile: 32x32 outputs, K steps of 128, 4 subgroups along K) or
// "cm128x32@2x4" (2 x 4 subgroups instead of 2 x 2) or "cm32x64/2+4" (K also split over 4 workgroups per
// tile) -> the tile; std::nullopt for anything else.
std::optional<CoopmatTile> parse_coopmat_tile(const std::string& text) {
  unsigned tile = 0, bk = 0, warps_k = 1, warps_m = 2, warps_n = 2, groups = 1;
  int used = 0;
  if (std::sscanf(text.c_str(), "cm%ux%u%n", &tile, &bk, &used) != 2) return std::nullopt;
  std::string rest = text.substr(static_cast<std::size_t>(used));
  if (!take_suffix(rest, '/', warps_k) || !take_suffix(rest, '+', groups)) return std::nullopt;
  if (!rest.empty()) {  // "@MxN": subgroups down and across
    used = 0;
    if (std::sscanf(rest.c_str(), "@%ux%u%n", &warps_m, &warps_n, &used) != 2) return std::nullopt;
    rest = rest.substr(static_cast<std::size_t>(used));
  }
  if (!rest.empty()) return std::nullopt;
  return CoopmatTile{tile, bk, warps_k, warps_m, warps_n, groups};
}

// A --tiles item: the launcher's choice ("auto"), a tiled blocking or a cooperative-matrix one.
struct ForcedTile {
  std::optional<GemmTile> tiled;
  std::optional<CoopmatTile> coopmat;
};

std::optional<ForcedTile> parse_forced(const std::string& text) {
  if (text.rfind("cm", 0) == 0) {
    auto tile = parse_coopmat_tile(text);
    return tile ? std::optional<ForcedTile>(ForcedTile{std::nullopt, *tile}) : std::nullopt;
  }
  auto tile = parse_tile(text);
  return tile ? std::optional<ForcedTile>(ForcedTile{*tile, std::nullopt}) : std::nullopt;
}

// A problem size: "n" (n x n x n) or "MxNxK".
struct Size {
  std::int64_t m = 0, n = 0, k = 0;
  std::string label() const {
    return m == n && n == k ? std::to_string(n) : std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  }
};

std::optional<Size> parse_size(const std::string& text) {
  long long m = 0, n = 0, k = 0;
  char end = 0;
  if (std::sscanf(text.c_str(), "%lldx%lldx%lld%c", &m, &n, &k, &end) == 3 && m > 0 && n > 0 && k > 0) return Size{m, n, k};
  if (std::sscanf(text.c_str(), "%lld%c", &n, &end) == 1 && n > 0) return Size{n, n, n};
  return std::nullopt;
}

std::string describe(const GemmTiling& t) {
  if (t.kernel == GemmKernel::kSkinny)
    return "skinny " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + ", " + std::to_string(t.k_lanes) + " k-lanes";
  if (t.kernel == GemmKernel::kCoopmat)
    return "coopmat " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk) + ", " +
           std::to_string(t.warps_m) + "x" + std::to_string(t.warps_n) + " subgroups" +
           (t.warps_k > 1 ? " x " + std::to_string(t.warps_k) + " along K" : std::string()) + ", " +
           std::to_string(t.workgroup_size) + " invocations, " +
           (t.groups > 1 ? std::to_string(t.groups) + " workgroups per tile, " : std::string()) +
           std::to_string(t.shared_bytes) + " B shared";
  return "tiled " + std::to_string(t.bm) + "x" + std::to_string(t.bn) + "x" + std::to_string(t.bk) + ", " +
         std::to_string(t.tm) + "x" + std::to_string(t.tn) + " per invocation, " + std::to_string(t.workgroup_size) +
         " invocations, " + std::to_string(t.stages) + " stage(s)" +
         (t.split > 1 ? ", split K " + std::to_string(t.split) : std::string()) +
         (t.groups > 1 ? ", " + std::to_string(t.groups) + " workgroups per tile" : std::string()) + ", " +
         std::to_string(t.shared_bytes) + " B shared";
}

struct Measured {
  double ms = -1.0;
  double max_rel_error = 0.0;
};

// Median over `runs` of the mean GPU milliseconds of back-to-back replays, after one real run whose
// output is spot-checked; ms < 0 when something failed (the error is printed).
Measured measure(const Context& context, const Size& size, DType dtype, int runs, int min_iterations) {
  Measured result;
  auto fail = [&](const Status& status) {
    std::fprintf(stderr, "  %s: %s\n", size.label().c_str(), status.to_string().c_str());
    return result;
  };
  const std::int64_t m = size.m, n = size.n, k = size.k;
  GraphBuilder b;
  const Tensor a = b.input("a", {m, k}, dtype);
  const Tensor bm = b.input("b", {k, n}, dtype);
  b.output(b.op("MatMul", {a, bm}), "c");
  auto graph = b.build();
  if (!graph.ok()) return fail(graph.status());

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> av(static_cast<std::size_t>(m * k)), bv(static_cast<std::size_t>(k * n));
  for (float& v : av) v = dist(rng);
  for (float& v : bv) v = dist(rng);
  const std::map<std::string, HostTensor> inputs = {{"a", HostTensor::from_floats({m, k}, av, dtype)},
                                                    {"b", HostTensor::from_floats({k, n}, bv, dtype)}};
  auto session = Session::create(context, *graph, {true, true});
  if (!session.ok()) return fail(session.status());
  auto out = session->run(inputs);
  if (!out.ok()) return fail(out.status());

  // Spot check against the inputs as stored (f16 rounds them).
  const std::vector<float> a_stored = inputs.at("a").to_floats(), b_stored = inputs.at("b").to_floats();
  const std::vector<float> c = out->at("c").to_floats();
  for (int s = 0; s < 16; ++s) {
    const std::int64_t i = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(m));
    const std::int64_t j = static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(n));
    double want = 0.0, scale = 0.0;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const double p = static_cast<double>(a_stored[static_cast<std::size_t>(i * k + kk)]) * b_stored[static_cast<std::size_t>(kk * n + j)];
      want += p;
      scale += std::fabs(p);
    }
    const double got = c[static_cast<std::size_t>(i * n + j)];
    result.max_rel_error = std::max(result.max_rel_error, std::fabs(got - want) / std::max(scale, 1e-30));
  }

  auto ms = bench::median_gpu_ms(*session, 100.0, min_iterations, runs);
  if (!ms.ok()) return fail(ms.status());
  result.ms = *ms;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const auto sizes = parse_items(arg(argc, argv, "--sizes", "1024,2048,4096,8192"), parse_size, "--sizes takes N or MxNxK");
  if (!sizes) return 2;
  const std::string dtype_flag = arg(argc, argv, "--dtype", "both");
  const int runs = std::stoi(arg(argc, argv, "--runs", "5"));
  const int min_iterations = std::stoi(arg(argc, argv, "--min-iterations", "3"));
  std::vector<DType> dtypes;
  if (dtype_flag == "f32" || dtype_flag == "both") dtypes.push_back(DType::kF32);
  if (dtype_flag == "f16" || dtype_flag == "both") dtypes.push_back(DType::kF16);
  if (dtypes.empty()) {
    std::fprintf(stderr, "--dtype takes f32, f16 or both, not %s\n", dtype_flag.c_str());
    return 2;
  }
  const auto tiles = parse_items(arg(argc, argv, "--tiles", "auto"), parse_forced,
                                 "--tiles takes auto, BMxBNxBK:TMxTN[/SPLIT][+GROUPS] or cmTILExBK[/SUBGROUPS_ALONG_K][@SUBGROUPS_MxN]");
  if (!tiles) return 2;

  auto context = Context::create({});
  if (!context.ok()) {
    std::fprintf(stderr, "%s\n", context.status().to_string().c_str());
    return 1;
  }
  const DeviceSummary device = context->device();
  const DevicePlan& plan = context->impl()->plan;
  std::printf("device: %s (%s), Vulkan %s; %u B shared memory, %u invocations per workgroup\n\n", device.name.c_str(),
              device.driver.c_str(), device.api_version.c_str(), plan.shared_memory_bytes, plan.max_workgroup_invocations);
  std::printf("| n | storage | median ms | TFLOP/s | max rel. error (16 samples) | blocking |\n");
  std::printf("|---:|---|---:|---:|---:|---|\n");
  for (const ForcedTile& tile : *tiles) {
    Status status = force_gemm_tile(tile.tiled, plan);
    if (status.ok()) status = force_coopmat_tile(tile.coopmat, plan);
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.to_string().c_str());
      continue;
    }
    for (const DType dtype : dtypes)
      for (const Size& size : *sizes) {
        const Measured m = measure(*context, size, dtype, runs, min_iterations);
        if (m.ms <= 0) continue;
        GemmProblem problem;
        problem.m = size.m;
        problem.n = size.n;
        problem.k = size.k;
        problem.a_stride_m = size.k;
        problem.b_stride_k = size.n;
        problem.a_dtype = problem.b_dtype = dtype;  // as MatMul's launch sets them
        const double flops = 2.0 * static_cast<double>(size.m) * static_cast<double>(size.n) * static_cast<double>(size.k);
        std::printf("| %s | %s | %.4f | %.3f | %.1e | %s |\n", size.label().c_str(), dtype_name(dtype), m.ms,
                    flops / (m.ms * 1e-3) / 1e12, m.max_rel_error, describe(choose_gemm_tiling(problem, plan)).c_str());
        std::fflush(stdout);
      }
  }
  return 0;
}
