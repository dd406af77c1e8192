// Conv benchmark: one Conv node (pads of half the window, bias, fp32 accumulation) per layer shape, in
// f32 or f16 storage, with the implicit-GEMM tile the launcher chooses ("auto") or tiles forced with
// ScopedConvTile, to compare tiles on one GPU. GPU time from Vulkan timestamps around back-to-back
// replays; median of the runs; TFLOP/s counts 2 * outputs * K flops. Each layer is spot-checked against
// a CPU convolution so that a fast wrong tile does not go unnoticed. Not a test: it asserts nothing.
//
//   vkfuse_bench_conv [--layers 64x56x56:64k3s1,...] [--batch 1] [--dtype f32|f16] [--runs 5]
//                     [--tiles auto,32x32:2x2/2+4,64x64:8x8+4,p64r8:8x16v4c8+2,...]
//   layer: C x H x W : M k KERNEL s STRIDE (input channels, height, width; output channels, square
//          window, stride); tile: BM x BN : TM x TN [/ split K inside the workgroup] [+ workgroups per
//          block] for the implicit GEMM, or p BM r RM : TH x TW v RW c CK [+ workgroups per block] for
//          the patch root (host/ops/nn_support.h, PatchTile)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include <vkfuse/vkfuse.hpp>

#include "bench_args.h"
#include "bench_timing.h"
#include "host/context_impl.h"
#include "host/op_registry.h"
#include "host/ops/nn_support.h"

namespace {

using namespace vkfuse;

using bench::arg;
using bench::parse_items;

struct Layer {
  std::int64_t c = 0, h = 0, w = 0, m = 0, kernel = 1, stride = 1;
  std::string label() const {
    return std::to_string(c) + "x" + std::to_string(h) + "x" + std::to_string(w) + ":" + std::to_string(m) + "k" +
           std::to_string(kernel) + "s" + std::to_string(stride);
  }
  std::int64_t out(std::int64_t extent) const { return (extent + 2 * (kernel / 2) - kernel) / stride + 1; }
};

std::optional<Layer> parse_layer(const std::string& text) {
  long long c = 0, h = 0, w = 0, m = 0, k = 0, s = 0;
  char end = 0;
  if (std::sscanf(text.c_str(), "%lldx%lldx%lld:%lldk%llds%lld%c", &c, &h, &w, &m, &k, &s, &end) != 6 || c <= 0 ||
      h <= 0 || w <= 0 || m <= 0 || k <= 0 || s <= 0)
    return std::nullopt;
  return Layer{c, h, w, m, k, s};
}

// The launcher's own choice, an implicit-GEMM tile, or a patch tile.
using TileChoice = std::variant<std::monostate, ConvTile, PatchTile>;

// "auto" -> the launcher's; "64x64:8x8/2+4" -> that implicit-GEMM tile; "p64r8:8x16v4c8+2" -> that patch
// tile; std::nullopt for anything else.
std::optional<TileChoice> parse_tile(const std::string& text) {
  if (text == "auto") return TileChoice{};
  long long bm = 0, bn = 0, tm = 0, tn = 0, split_k = 1, parts = 1;
  int used = 0;
  if (!text.empty() && text[0] == 'p') {
    long long rm = 0, th = 0, tw = 0, rw = 0, ck = 0;
    if (std::sscanf(text.c_str(), "p%lldr%lld:%lldx%lldv%lldc%lld%n", &bm, &rm, &th, &tw, &rw, &ck, &used) != 6)
      return std::nullopt;
    const std::string rest = text.substr(static_cast<std::size_t>(used));
    if (!rest.empty() && (std::sscanf(rest.c_str(), "+%lld%n", &parts, &used) != 1 || rest.size() != static_cast<std::size_t>(used)))
      return std::nullopt;
    return TileChoice{PatchTile{bm, rm, th, tw, rw, ck, parts}};
  }
  if (std::sscanf(text.c_str(), "%lldx%lld:%lldx%lld%n", &bm, &bn, &tm, &tn, &used) != 4) return std::nullopt;
  std::string rest = text.substr(static_cast<std::size_t>(used));
  auto take = [&rest](char mark, long long& value) {
    if (rest.empty() || rest[0] != mark) return true;
    int n = 0;
    const char format[] = {mark, '%', 'l', 'l', 'd', '%', 'n', '\0'};
    if (std::sscanf(rest.c_str(), format, &value, &n) != 1) return false;
    rest = rest.substr(static_cast<std::size_t>(n));
    return true;
  };
  if (!take('/', split_k) || !take('+', parts) || !rest.empty()) return std::nullopt;
  return TileChoice{ConvTile{bm, bn, tm, tn, split_k, parts}};
}

// The blocking the launcher sets for `layer` (with the forced tile, if any): "BMxBN TMxTN sS pP bkK".
std::string blocking(const Layer& layer, std::int64_t batch, DType dtype, const DevicePlan& plan) {
  const OpDef* op = find_op("Conv");
  const std::vector<TensorInfo> in = {{{batch, layer.c, layer.h, layer.w}, dtype},
                                      {{layer.m, layer.c, layer.kernel, layer.kernel}, dtype},
                                      {{layer.m}, dtype}};
  AttrLists lists;
  const std::int64_t pad = layer.kernel / 2;
  lists.emplace("pads", std::vector<std::int64_t>{pad, pad, pad, pad});
  lists.emplace("strides", std::vector<std::int64_t>{layer.stride, layer.stride});
  const float group[] = {1.0f};
  auto launch = op->launch(in, TensorInfo{}, OpAttrs{group, lists}, plan);
  if (!launch.ok()) return launch.status().to_string();
  auto define = [&](std::string_view name) {
    for (const auto& [key, value] : launch->defines)
      if (key == name) return value.back() == 'u' ? value.substr(0, value.size() - 1) : value;
    return std::string("?");
  };
  const std::string grid = std::to_string(launch->workgroups[0] * launch->workgroups[1] * launch->workgroups[2]) + " x " +
                           std::to_string(launch->workgroup_size);
  if (launch->root == "roots/conv2d_patch.glsl")
    return "patch " + define("VKF_BM") + "/" + define("VKF_RM") + " " + define("VKF_TH") + "x" + define("VKF_TW") + "/" +
           define("VKF_RW") + " ck" + define("VKF_CK") + " p" + define("VKF_SPLIT_GROUPS") + " pws" + define("VKF_PWS") + ", " + grid;
  if (launch->root != "roots/conv2d.glsl") return launch->root;
  return define("VKF_BM") + "x" + define("VKF_BN") + " " + define("VKF_TM") + "x" + define("VKF_TN") + " s" +
         define("VKF_SPLIT_K") + " p" + define("VKF_SPLIT_GROUPS") + " bk" + define("VKF_BK") + ", " + grid;
}

struct Measured {
  double ms = -1.0;
  double max_rel_error = 0.0;
};

Measured measure(const Context& context, const Layer& layer, std::int64_t batch, DType dtype, int runs) {
  Measured result;
  auto fail = [&](const Status& status) {
    std::fprintf(stderr, "  %s: %s\n", layer.label().c_str(), status.to_string().c_str());
    return result;
  };
  const std::int64_t pad = layer.kernel / 2, oh = layer.out(layer.h), ow = layer.out(layer.w);
  const Shape xs{batch, layer.c, layer.h, layer.w}, ws{layer.m, layer.c, layer.kernel, layer.kernel};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](std::int64_t count) {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (float& x : v) x = dist(rng);
    return v;
  };
  const std::vector<float> xv = random(batch * layer.c * layer.h * layer.w),
                           wv = random(layer.m * layer.c * layer.kernel * layer.kernel), bv = random(layer.m);
  GraphBuilder b;
  const Tensor x = b.input("x", xs, dtype);
  const Tensor w = b.constant(HostTensor::from_floats(ws, wv, dtype), "w");
  const Tensor bias = b.constant(HostTensor::from_floats({layer.m}, bv, dtype), "b");
  b.output(b.op("Conv", {x, w, bias},
                {{"pads", std::vector<std::int64_t>{pad, pad, pad, pad}}, {"strides", std::vector<std::int64_t>{layer.stride, layer.stride}}}),
           "y");
  auto graph = b.build();
  if (!graph.ok()) return fail(graph.status());
  const std::map<std::string, HostTensor> inputs = {{"x", HostTensor::from_floats(xs, xv, dtype)}};
  auto session = Session::create(context, *graph, {true, true});
  if (!session.ok()) return fail(session.status());
  auto out = session->run(inputs);
  if (!out.ok()) return fail(out.status());

  // Spot check 16 outputs against the values as stored (f16 rounds them).
  const std::vector<float> xs_stored = inputs.at("x").to_floats(), ws_stored = HostTensor::from_floats(ws, wv, dtype).to_floats(),
                           bs_stored = HostTensor::from_floats({layer.m}, bv, dtype).to_floats();
  const std::vector<float> y = out->at("y").to_floats();
  for (int s = 0; s < 16; ++s) {
    const std::int64_t n = rng() % static_cast<std::uint32_t>(batch), m = rng() % static_cast<std::uint32_t>(layer.m),
                       i = rng() % static_cast<std::uint32_t>(oh), j = rng() % static_cast<std::uint32_t>(ow);
    double want = bs_stored[static_cast<std::size_t>(m)], scale = std::fabs(want);
    for (std::int64_t c = 0; c < layer.c; ++c)
      for (std::int64_t kh = 0; kh < layer.kernel; ++kh)
        for (std::int64_t kw = 0; kw < layer.kernel; ++kw) {
          const std::int64_t ih = i * layer.stride - pad + kh, iw = j * layer.stride - pad + kw;
          if (ih < 0 || iw < 0 || ih >= layer.h || iw >= layer.w) continue;
          const double p = static_cast<double>(xs_stored[static_cast<std::size_t>(((n * layer.c + c) * layer.h + ih) * layer.w + iw)]) *
                           ws_stored[static_cast<std::size_t>(((m * layer.c + c) * layer.kernel + kh) * layer.kernel + kw)];
          want += p;
          scale += std::fabs(p);
        }
    const double got = y[static_cast<std::size_t>(((n * layer.m + m) * oh + i) * ow + j)];
    result.max_rel_error = std::max(result.max_rel_error, std::fabs(got - want) / std::max(scale, 1e-30));
  }

  auto ms = bench::median_gpu_ms(*session, 50.0, 3, runs);
  if (!ms.ok()) return fail(ms.status());
  result.ms = *ms;
  return result;
}

}  // namespace

int main(int argc, char** argv) {
  const auto layers = parse_items(arg(argc, argv, "--layers", "64x56x56:64k3s1,128x28x28:128k3s1,256x14x14:256k3s1,512x7x7:512k3s1"),
                                  parse_layer, "--layers takes CxHxW:MkKERNELsSTRIDE");
  const auto tiles = parse_items(arg(argc, argv, "--tiles", "auto"), parse_tile,
                                 "--tiles takes auto, BMxBN:TMxTN[/SPLIT][+PARTS] or pBMrRM:THxTWvRWcCK[+PARTS]");
  if (!layers || !tiles) return 2;
  const std::int64_t batch = std::stoll(arg(argc, argv, "--batch", "1"));
  const int runs = std::stoi(arg(argc, argv, "--runs", "5"));
  const std::string dtype_flag = arg(argc, argv, "--dtype", "f32");
  if (dtype_flag != "f32" && dtype_flag != "f16") {
    std::fprintf(stderr, "--dtype takes f32 or f16, not %s\n", dtype_flag.c_str());
    return 2;
  }
  const DType dtype = dtype_flag == "f16" ? DType::kF16 : DType::kF32;

  auto context = Context::create({});
  if (!context.ok()) {
    std::fprintf(stderr, "%s\n", context.status().to_string().c_str());
    return 1;
  }
  const DeviceSummary device = context->device();
  const DevicePlan& plan = context->impl()->plan;
  std::printf("device: %s (%s); batch %lld, %s\n\n", device.name.c_str(), device.driver.c_str(),
              static_cast<long long>(batch), dtype_flag.c_str());
  std::printf("| layer | tile | median ms | TFLOP/s | max rel. error (16 samples) | blocking, workgroups x invocations |\n");
  std::printf("|---|---|---:|---:|---:|---|\n");
  for (const Layer& layer : *layers)
    for (const TileChoice& choice : *tiles) {
      std::optional<ScopedConvTile> forced;
      std::optional<ScopedPatchTile> forced_patch;
      std::string name = "auto";
      if (const PatchTile* patch = std::get_if<PatchTile>(&choice)) {
        if (!patch_tile_usable(*patch, plan)) {
          std::fprintf(stderr, "  patch tile does not fit this device or the root\n");
          continue;
        }
        forced_patch.emplace(*patch);
        name = "forced";
      }
      if (const ConvTile* tile = std::get_if<ConvTile>(&choice)) {
        if (!conv_tile_usable(*tile, plan)) {
          std::fprintf(stderr, "  tile %lldx%lld:%lldx%lld/%lld+%lld does not fit this device or the root\n",
                       static_cast<long long>(tile->bm), static_cast<long long>(tile->bn), static_cast<long long>(tile->tm),
                       static_cast<long long>(tile->tn), static_cast<long long>(tile->split), static_cast<long long>(tile->parts));
          continue;
        }
        forced.emplace(*tile);
        name = "forced";
      }
      const Measured m = measure(*context, layer, batch, dtype, runs);
      if (m.ms <= 0) continue;
      const double k = static_cast<double>(layer.c * layer.kernel * layer.kernel);
      const double flops = 2.0 * static_cast<double>(batch * layer.m * layer.out(layer.h) * layer.out(layer.w)) * k;
      std::printf("| %s | %s | %.4f | %.2f | %.1e | %s |\n", layer.label().c_str(), name.c_str(), m.ms,
                  flops / (m.ms * 1e-3) / 1e12, m.max_rel_error, blocking(layer, batch, dtype, plan).c_str());
      std::fflush(stdout);
    }
  return 0;
}
