#include "inference.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace viewer {
namespace {

std::string describe(const vkfuse::TensorDesc& t) {
  std::string s = t.name + " " + vkfuse::dtype_name(t.dtype) + "[";
  for (std::size_t d = 0; d < t.shape.size(); ++d) {
    const bool named = d < t.dim_names.size() && !t.dim_names[d].empty();
    s += (d ? "," : "") + (t.shape[d] >= 0 ? std::to_string(t.shape[d]) : named ? t.dim_names[d] : "?");
  }
  return s + "]";
}

// Distinct, saturated colours for class indices: hues spread by the golden ratio, class 0 (background
// in most segmentation models) transparent so the frame shows through.
std::vector<std::array<float, 4>> make_palette(std::size_t classes) {
  std::vector<std::array<float, 4>> palette;
  for (std::size_t k = 0; k < classes; ++k) {
    if (k == 0) {
      palette.push_back({0.0f, 0.0f, 0.0f, 0.0f});
      continue;
    }
    const float h = std::fmod(0.61803398875f * static_cast<float>(k), 1.0f) * 6.0f;
    const float x = 1.0f - std::fabs(std::fmod(h, 2.0f) - 1.0f);
    std::array<float, 3> rgb{};
    switch (static_cast<int>(h)) {
      case 0: rgb = {1, x, 0}; break;
      case 1: rgb = {x, 1, 0}; break;
      case 2: rgb = {0, 1, x}; break;
      case 3: rgb = {0, x, 1}; break;
      case 4: rgb = {x, 0, 1}; break;
      default: rgb = {1, 0, x}; break;
    }
    palette.push_back({0.15f + 0.85f * rgb[0], 0.15f + 0.85f * rgb[1], 0.15f + 0.85f * rgb[2], 1.0f});
  }
  return palette;
}

}  // namespace

const char* kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::kImage: return "image-to-image";
    case OutputKind::kSegmentation: return "segmentation";
    case OutputKind::kClassification: return "classification";
  }
  return "?";
}

std::unique_ptr<Inference> Inference::create(Gpu& gpu, const vkfuse::Context& context, const ModelOptions& options,
                                             VkExtent2D frame_extent, const std::vector<Image*>& frames, std::string* error) {
  std::unique_ptr<Inference> self(new Inference(gpu));
  self->name_ = options.path.empty() ? "cartoon (embedded)" : options.path;
  const std::vector<unsigned char>& bytes = embedded_model();
  auto info = options.path.empty() ? vkfuse::inspect_onnx_from_memory(bytes.data(), bytes.size(), self->name_)
                                   : vkfuse::inspect_onnx(options.path);
  if (!info.ok()) {
    *error = info.status().to_string();
    return nullptr;
  }
  const std::string where = "model " + self->name_;
  if (info->inputs.size() != 1 || info->outputs.empty()) {
    *error = where + ": has " + std::to_string(info->inputs.size()) + " inputs and " + std::to_string(info->outputs.size()) +
             " outputs; the viewer feeds one input from the frame and shows the first output";
    return nullptr;
  }
  const vkfuse::TensorDesc& in = info->inputs[0];
  const bool nhwc = in.shape.size() == 4 && in.shape[3] == 3 && in.shape[1] != 3;
  if (in.dtype != vkfuse::DType::kF32 || in.shape.size() != 4 || (in.shape[1] != 3 && !nhwc) || in.shape[0] > 1) {
    *error = where + ": its input " + describe(in) +
             " cannot be fed from a video frame: expected floats [1, 3, H, W] (or [1, H, W, 3]), RGB";
    return nullptr;
  }
  self->input_name_ = in.name;
  const int h_axis = nhwc ? 1 : 2, w_axis = nhwc ? 2 : 3;
  const VkExtent2D wanted = options.size.value_or(frame_extent);
  const std::int64_t height = in.shape[h_axis] > 0 ? in.shape[h_axis] : wanted.height;
  const std::int64_t width = in.shape[w_axis] > 0 ? in.shape[w_axis] : wanted.width;
  self->model_extent_ = {static_cast<uint32_t>(width), static_cast<uint32_t>(height)};
  vkfuse::OnnxOptions onnx;
  onnx.input_shapes[in.name] = nhwc ? vkfuse::Shape{1, height, width, 3} : vkfuse::Shape{1, 3, height, width};
  auto load = [&](vkfuse::DType float_dtype) {
    onnx.float_dtype = float_dtype;
    return options.path.empty() ? vkfuse::load_onnx_from_memory(bytes.data(), bytes.size(), onnx, self->name_)
                                : vkfuse::load_onnx(options.path, onnx);
  };
  auto graph = load(vkfuse::DType::kF32);
  if (!graph.ok()) {
    *error = graph.status().to_string();
    return nullptr;
  }
  const vkfuse::TensorDesc out = graph->outputs()[0];
  self->output_name_ = out.name;
  const vkfuse::Shape& s = out.shape;
  vkfuse::SessionOptions session_options;
  vkfuse::ImageInput image_input;
  image_input.width = frame_extent.width;
  image_input.height = frame_extent.height;
  image_input.nhwc = nhwc;
  if (s.size() == 4 && s[0] == 1 && (s[1] == 3 || s[1] == 1 || s[3] == 3)) {
    self->kind_ = OutputKind::kImage;
  } else if (s.size() == 4 && s[0] == 1 && s[1] >= 2) {
    self->kind_ = OutputKind::kSegmentation;
  } else if ((s.size() == 2 && s[0] == 1 && s[1] >= 2) || (s.size() == 1 && s[0] >= 2)) {
    self->kind_ = OutputKind::kClassification;
    self->classes_ = static_cast<std::size_t>(s.back());
  } else {
    *error = where + ": its output " + describe(out) +
             " cannot be shown: expected an image [1, 3, H, W], a segmentation [1, C, H, W] or class scores [1, N]";
    return nullptr;
  }
  const bool imagenet = options.normalize == ModelOptions::Normalize::kImageNet ||
                        (options.normalize == ModelOptions::Normalize::kAuto && self->kind_ != OutputKind::kImage);
  if (imagenet) {
    image_input.mean = {0.485f, 0.456f, 0.406f, 0.0f};
    image_input.std = {0.229f, 0.224f, 0.225f, 1.0f};
  }
  session_options.image_inputs[in.name] = image_input;
  if (self->kind_ != OutputKind::kClassification) {
    const bool out_nhwc = s[3] == 3 && s[1] != 3;
    self->output_extent_ = {static_cast<uint32_t>(out_nhwc ? s[2] : s[3]), static_cast<uint32_t>(out_nhwc ? s[1] : s[2])};
    vkfuse::ImageOutput image_output;
    image_output.nhwc = out_nhwc;
    if (self->kind_ == OutputKind::kSegmentation) {
      image_output.mode = vkfuse::ImageOutput::Mode::kPalette;
      image_output.palette = make_palette(std::min<std::size_t>(static_cast<std::size_t>(s[1]), 256));
    } else if (s[1] == 1) {
      image_output.channels = {0, 0, 0, -1};
    }
    session_options.image_outputs[out.name] = image_output;
  }
  std::optional<vkfuse::Graph> fp16;
  if (options.want_fp16 && gpu.fp16) {
    auto half = load(vkfuse::DType::kF16);
    if (!half.ok()) {
      *error = half.status().to_string();
      return nullptr;
    }
    fp16 = std::move(half).value();
  }
  if (!self->compile(context, *graph, fp16, session_options, frames, error)) return nullptr;
  return self;
}

bool Inference::compile(const vkfuse::Context& context, const vkfuse::Graph& fp32, const std::optional<vkfuse::Graph>& fp16,
                        const vkfuse::SessionOptions& options, const std::vector<Image*>& frames, std::string* error) {
  for (std::size_t slot = 0; slot < frames.size(); ++slot) {
    if (kind_ == OutputKind::kClassification) {
      scores_.push_back(gpu_.make_buffer(classes_ * sizeof(float), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, true, error));
      if (!scores_.back().buffer) return false;
      std::memset(scores_.back().mapped, 0, classes_ * sizeof(float));
    } else {
      outputs_.push_back(gpu_.make_image(output_extent_, VK_FORMAT_R8G8B8A8_UNORM,
                                         VK_IMAGE_USAGE_STORAGE_BIT | VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT,
                                         error));
      if (!outputs_.back().image) return false;
    }
  }
  for (bool half : {false, true}) {
    if (half && !fp16) continue;
    for (bool fused : {true, false}) {
      Variant v;
      v.fused = fused;
      v.fp16 = half;
      vkfuse::SessionOptions o = options;
      o.fusion = fused;
      auto session = vkfuse::Session::create(context, half ? *fp16 : fp32, o);
      if (!session.ok()) {
        *error = session.status().with_context(std::string(fused ? "fused" : "unfused") + (half ? " fp16" : " fp32")).to_string();
        return false;
      }
      v.dispatches = session->dispatch_count();
      v.create_ms = session->create_stats().total_ms;
      for (std::size_t slot = 0; slot < frames.size(); ++slot) {
        auto execution = session->create_execution();
        if (!execution.ok()) {
          *error = execution.status().to_string();
          return false;
        }
        vkfuse::ImageBinding frame{frames[slot]->image, frames[slot]->view};
        frame.format = frames[slot]->format;
        frame.extent = frames[slot]->extent;
        vkfuse::Status bound = execution->bind_image(input_name_, frame);
        if (bound.ok() && kind_ == OutputKind::kClassification) {
          bound = execution->bind(output_name_, {scores_[slot].buffer, 0, classes_ * sizeof(float), VK_BUFFER_USAGE_STORAGE_BUFFER_BIT});
        } else if (bound.ok()) {
          vkfuse::ImageBinding out{outputs_[slot].image, outputs_[slot].view};
          out.layout = VK_IMAGE_LAYOUT_UNDEFINED;  // written whole every frame
          out.format = outputs_[slot].format;
          out.extent = outputs_[slot].extent;
          bound = execution->bind_image(output_name_, out);
        }
        if (!bound.ok()) {
          *error = bound.to_string();
          return false;
        }
        v.executions.push_back(std::move(execution).value());
      }
      v.session = std::move(session).value();
      variants_.push_back(std::move(v));
    }
  }
  return true;
}

Inference::~Inference() {
  vkDeviceWaitIdle(gpu_.device);
  variants_.clear();
  for (Image& image : outputs_) gpu_.destroy(image);
  for (Buffer& buffer : scores_) gpu_.destroy(buffer);
}

bool Inference::has_fp16() const {
  return std::any_of(variants_.begin(), variants_.end(), [](const Variant& v) { return v.fp16; });
}

Variant& Inference::variant(bool fused, bool fp16) {
  const bool half = fp16 && has_fp16();
  for (Variant& v : variants_)
    if (v.fused == fused && v.fp16 == half) return v;
  return variants_.front();
}

bool Inference::record(Variant& variant, std::size_t slot, VkCommandBuffer cb, std::string* error) {
  vkfuse::RecordSync sync;
  sync.before = {VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT};  // the frame's upload
  // The draw samples the output image; a classifier's scores are read on the host after the fence.
  sync.after = {VK_PIPELINE_STAGE_FRAGMENT_SHADER_BIT | VK_PIPELINE_STAGE_HOST_BIT,
                VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_HOST_READ_BIT};
  if (vkfuse::Status s = variant.executions[slot].record(cb, sync); !s.ok()) {
    *error = s.to_string();
    return false;
  }
  return true;
}

double Inference::gpu_ms(Variant& variant, std::size_t slot) {
  auto ms = variant.executions[slot].last_gpu_ms();
  return ms.ok() ? *ms : 0.0;
}

std::vector<std::pair<int, float>> Inference::top5(std::size_t slot) const {
  std::vector<std::pair<int, float>> top;
  if (kind_ != OutputKind::kClassification) return top;
  // Probabilities: a softmax over the scores (logits, as most classifiers end).
  const float* scores = static_cast<const float*>(scores_[slot].mapped);
  const float best = *std::max_element(scores, scores + classes_);
  double sum = 0.0;
  for (std::size_t k = 0; k < classes_; ++k) sum += std::exp(static_cast<double>(scores[k] - best));
  for (std::size_t k = 0; k < classes_; ++k)
    top.push_back({static_cast<int>(k), static_cast<float>(std::exp(static_cast<double>(scores[k] - best)) / sum)});
  const std::size_t n = std::min<std::size_t>(5, top.size());
  std::partial_sort(top.begin(), top.begin() + static_cast<std::ptrdiff_t>(n), top.end(),
                    [](const auto& a, const auto& b) { return a.second > b.second; });
  top.resize(n);
  return top;
}

}  // namespace viewer
