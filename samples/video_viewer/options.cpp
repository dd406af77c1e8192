#include "options.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>

namespace viewer {
namespace {

// "1280x720" -> extent; CLI11 validator message otherwise.
std::string parse_extent(const std::string& text, std::optional<VkExtent2D>* out) {
  unsigned w = 0, h = 0;
  char x = 0, rest = 0;
  if (std::sscanf(text.c_str(), "%u%c%u%c", &w, &x, &h, &rest) != 3 || x != 'x' || w == 0 || h == 0 || w > 16384 || h > 16384)
    return "'" + text + "' is not WIDTHxHEIGHT (e.g. 1280x720)";
  *out = VkExtent2D{w, h};
  return "";
}

}  // namespace

std::optional<int> parse_options(int argc, char** argv, Options* o) {
  CLI::App app("Decodes a video, runs an ONNX model on every frame with vkfuse on the same Vulkan device, and shows both.",
               "video_viewer");
  app.get_formatter()->label("Usage", "usage");
  app.add_option("--input", o->input, "a video file, a V4L2 camera (/dev/video0) or testsrc (default)")->type_name("SRC");
  std::string input_size, size, precision = "fp32", view, normalize = "auto", model_size;
  app.add_option("--input-size", input_size, "testsrc's size (default 1280x720)")->type_name("WxH");
  app.add_option("--model", o->model.path, "an ONNX model (default: the embedded cartoon filter)")->type_name("FILE");
  app.add_option("--model-size", model_size, "the model's input size where its H and W are symbolic (default: the frame's)")
      ->type_name("WxH");
  app.add_option("--precision", precision, "fp32 (default) or fp16 at start; P toggles")->check(CLI::IsMember({"fp32", "fp16"}));
  app.add_flag("--no-fusion", [o](std::int64_t) { o->fusion = false; }, "start unfused; F toggles");
  app.add_option("--normalize", normalize, "the model's input: auto (ImageNet for classifiers and segmenters), none, imagenet")
      ->check(CLI::IsMember({"auto", "none", "imagenet"}));
  app.add_option("--labels", o->labels, "a classifier's class names, one per line")->type_name("FILE");
  app.add_option("--view", view, "side, split, output, overlay or frame (default: by the model's output)")
      ->check(CLI::IsMember({"side", "split", "output", "overlay", "frame"}));
  app.add_option("--frames", o->frames, "stop after N frames (default: until the window closes)")->check(CLI::PositiveNumber);
  app.add_option("--screenshot", o->screenshot, "at exit, the last frame shown as PNG")->type_name("PNG");
  app.add_option("--dump-frame", o->dump_frame, "at exit, the last decoded frame (the model's input) as PNG")->type_name("PNG");
  app.add_flag("--offscreen", o->offscreen, "no window: draw into an image (for machines without a display)");
  app.add_option("--size", size, "the window's or offscreen image's size (default: from the frame and view)")->type_name("WxH");
  app.add_flag("--no-hud", [o](std::int64_t) { o->hud = false; }, "no overlay (H toggles)");
  app.add_flag("--no-pace", [o](std::int64_t) { o->pace = false; }, "a file plays as fast as it decodes, not at its frame rate");
  app.add_option("--frames-in-flight", o->frames_in_flight, "2 or 3 (default 3)")->check(CLI::Range(2, 3));
  app.add_option("--device", o->device, "the Vulkan device's index (default: the first that can)")->check(CLI::NonNegativeNumber);
  std::string resize;
  app.add_option("--resize-after", resize, "the window resizes itself to WxH after N frames (for tests)")->type_name("N:WxH");
  app.add_flag("--json", o->json, "at exit, a summary as JSON on stdout (per-frame times, averaged)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "video_viewer: %s\n(video_viewer --help for the options)\n", e.what());
    return 2;
  }
  auto bad = [](const char* flag, const std::string& why) {
    std::fprintf(stderr, "video_viewer: %s %s\n", flag, why.c_str());
    return std::optional<int>(2);
  };
  if (!input_size.empty())
    if (std::string why = parse_extent(input_size, &o->input_size); !why.empty()) return bad("--input-size", why);
  if (!size.empty())
    if (std::string why = parse_extent(size, &o->size); !why.empty()) return bad("--size", why);
  if (!model_size.empty())
    if (std::string why = parse_extent(model_size, &o->model.size); !why.empty()) return bad("--model-size", why);
  if (!resize.empty()) {
    const std::size_t colon = resize.find(':');
    std::optional<VkExtent2D> to;
    char* stop = nullptr;
    const long frame = colon == std::string::npos ? -1 : std::strtol(resize.c_str(), &stop, 10);
    if (frame < 0 || stop != resize.c_str() + colon || !parse_extent(resize.substr(colon + 1), &to).empty())
      return bad("--resize-after", "'" + resize + "' is not N:WxH (e.g. 10:640x360)");
    o->resize_frame = static_cast<int>(frame);
    o->resize_to = *to;
  }
  o->fp16 = precision == "fp16";
  o->model.normalize = normalize == "none"       ? ModelOptions::Normalize::kNone
                       : normalize == "imagenet" ? ModelOptions::Normalize::kImageNet
                                                 : ModelOptions::Normalize::kAuto;
  static const std::map<std::string, ViewMode> kViews = {{"side", ViewMode::kSideBySide}, {"split", ViewMode::kSplit},
                                                         {"output", ViewMode::kOutput},   {"overlay", ViewMode::kOverlay},
                                                         {"frame", ViewMode::kFrame}};
  if (!view.empty()) o->view = kViews.at(view);
  return std::nullopt;
}

}  // namespace viewer
