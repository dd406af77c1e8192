// The model on the viewer's device: what kind of output it has (an image, a segmentation, a
// classification), its sessions (fused and unfused, fp32 and fp16, all compiled up front so a key
// switches between them live), and per frame in flight one vkfuse::Execution of each, bound to that
// frame's images: the decoded frame is sampled in the first kernel's loads, the output is written
// into the frame's output image (or, for a classifier, a host-visible buffer the HUD reads).
//
// Ownership: Inference owns its vkfuse objects and the output images and buffers; the frame images are
// the caller's and must outlive it. One thread.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vkfuse/interop.hpp>
#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

#include "gpu.h"

namespace viewer {

enum class OutputKind { kImage, kSegmentation, kClassification };
const char* kind_name(OutputKind kind);

struct ModelOptions {
  std::string path;                    // "" = the embedded default (the cartoon filter)
  std::optional<VkExtent2D> size;      // the model's input size where its H and W are symbolic
  enum class Normalize { kAuto, kNone, kImageNet } normalize = Normalize::kAuto;
  bool want_fp16 = true;               // compile fp16 sessions too (where the device can)
};

// One compiled variant of the model.
struct Variant {
  bool fused = true;
  bool fp16 = false;
  std::optional<vkfuse::Session> session;
  std::vector<vkfuse::Execution> executions;  // one per frame in flight
  std::size_t dispatches = 0;
  double create_ms = 0.0;
};

class Inference {
 public:
  // Loads and compiles the model for frames of `frame_extent`, `slots` frames in flight, each with its
  // frame image `frames[i]` (sampled). Errors say which input or output cannot map to an image.
  static std::unique_ptr<Inference> create(Gpu& gpu, const vkfuse::Context& context, const ModelOptions& options,
                                           VkExtent2D frame_extent, const std::vector<Image*>& frames, std::string* error);
  ~Inference();

  OutputKind kind() const { return kind_; }
  const std::string& name() const { return name_; }
  VkExtent2D model_extent() const { return model_extent_; }     // the model's input H x W
  VkExtent2D output_extent() const { return output_extent_; }   // the output image's (kImage, kSegmentation)
  const Image& output_image(std::size_t slot) const { return outputs_[slot]; }
  bool has_fp16() const;

  // The variant a frame runs: select(fused, fp16) falls back to fp32 where fp16 was not compiled.
  Variant& variant(bool fused, bool fp16);

  // Records the variant's model for `slot` into `cb` (after the upload into the frame image, before
  // the draw that samples the output image).
  bool record(Variant& variant, std::size_t slot, VkCommandBuffer cb, std::string* error);
  // After the slot's frame has completed: its GPU time (0 when unknown) and, for a classifier, the
  // top five (class, probability: the softmax of its scores).
  double gpu_ms(Variant& variant, std::size_t slot);
  std::vector<std::pair<int, float>> top5(std::size_t slot) const;

 private:
  Inference(Gpu& gpu) : gpu_(gpu) {}
  bool compile(const vkfuse::Context& context, const vkfuse::Graph& fp32, const std::optional<vkfuse::Graph>& fp16,
               const vkfuse::SessionOptions& options, const std::vector<Image*>& frames, std::string* error);

  Gpu& gpu_;
  OutputKind kind_ = OutputKind::kImage;
  std::string name_, input_name_, output_name_;
  VkExtent2D model_extent_{0, 0}, output_extent_{0, 0};
  std::size_t classes_ = 0;
  std::vector<Image> outputs_;         // per slot: the output image
  std::vector<Buffer> scores_;         // per slot: a classifier's output
  std::vector<Variant> variants_;      // fused fp32, unfused fp32, then fp16 ones where compiled
};

// The embedded default model's bytes (models/cartoon.onnx, built into the program).
const std::vector<unsigned char>& embedded_model();

}  // namespace viewer
