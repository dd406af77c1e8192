// The C API (vkfuse/vkfuse.h) over the C++ one: each handle owns the C++ object and the C views of
// its strings and shapes; each call turns a Status into a code plus this thread's last message.
#include <vkfuse/vkfuse.h>

#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

#include "host/c_api_internal.h"

namespace vkfuse::c_api {

std::string& last_error() {
  thread_local std::string message;
  return message;
}
vkf_status fail(const Status& status) {
  last_error() = status.message();
  return static_cast<vkf_status>(status.code());
}
vkf_status fail(vkf_status code, std::string message) {
  last_error() = std::move(message);
  return code;
}
vkf_status invalid(const char* function, const char* what) {
  return fail(VKF_INVALID_ARGUMENT, std::string(function) + ": " + what);
}

vkf_status host_tensor(const vkf_tensor& t, const char* function, HostTensor* out) {
  if (t.name == nullptr) return invalid(function, "a tensor has a NULL name");
  const std::string where = std::string(function) + ": input '" + t.name + "'";
  if (!valid_dtype(t.dtype)) return fail(VKF_INVALID_ARGUMENT, where + " has an unknown dtype " + std::to_string(t.dtype));
  if (t.rank > 0 && t.shape == nullptr) return fail(VKF_INVALID_ARGUMENT, where + " has rank > 0 and a NULL shape");
  HostTensor host;
  host.dtype = static_cast<DType>(t.dtype);
  host.shape.assign(t.shape, t.shape + t.rank);
  for (std::int64_t d : host.shape)
    if (d < 0) return fail(VKF_INVALID_ARGUMENT, where + " has a negative dimension in " + shape_to_string(host.shape));
  const std::size_t bytes = static_cast<std::size_t>(host.numel()) * dtype_size(host.dtype);
  if (t.size != bytes)
    return fail(VKF_INVALID_ARGUMENT, where + ": size is " + std::to_string(t.size) + " bytes; " + shape_to_string(host.shape) +
                                          " " + dtype_name(host.dtype) + " is " + std::to_string(bytes));
  if (bytes > 0 && t.data == nullptr) return fail(VKF_INVALID_ARGUMENT, where + " has NULL data");
  host.bytes.resize(bytes);
  if (bytes > 0) std::memcpy(host.bytes.data(), t.data, bytes);
  *out = std::move(host);
  return VKF_OK;
}

}  // namespace vkfuse::c_api

namespace {

using vkfuse::ErrorCode;
using vkfuse::Status;
using vkfuse::c_api::fail;
using vkfuse::c_api::invalid;
using vkfuse::c_api::valid_dtype;

// C views (pointers into the strings and vectors it keeps) of TensorDescs.
struct TensorViews {
  std::vector<vkfuse::TensorDesc> descs;
  std::vector<std::vector<const char*>> dim_names;

  void set(std::vector<vkfuse::TensorDesc> from) {
    descs = std::move(from);
    dim_names.assign(descs.size(), {});
    for (std::size_t i = 0; i < descs.size(); ++i) {
      descs[i].dim_names.resize(descs[i].shape.size());  // "" for every fixed dim
      for (const std::string& n : descs[i].dim_names) dim_names[i].push_back(n.c_str());
    }
  }
  vkf_status get(std::size_t index, vkf_tensor_info* info, const char* function) const {
    if (info == nullptr) return invalid(function, "info is NULL");
    if (index >= descs.size())
      return fail(VKF_INVALID_ARGUMENT, std::string(function) + ": index " + std::to_string(index) + " is past the " +
                                            std::to_string(descs.size()) + " the model has");
    const vkfuse::TensorDesc& d = descs[index];
    *info = {d.name.c_str(), static_cast<vkf_dtype>(d.dtype), d.shape.size(), d.shape.data(), dim_names[index].data()};
    return VKF_OK;
  }
};

struct DeviceStrings {
  std::vector<vkfuse::DeviceSummary> summaries;
  std::vector<vkf_device_info> infos;
};

vkf_device_info device_info(const vkfuse::DeviceSummary& s) {
  return {s.index, s.name.c_str(), s.type.c_str(), s.driver.c_str(), s.api_version.c_str(), s.device_local_bytes,
          s.default_choice ? 1 : 0};
}

}  // namespace

struct vkf_model {
  std::optional<vkfuse::Graph> graph;  // none for vkf_onnx_inspect
  TensorViews inputs, outputs;
};

extern "C" {

const char* vkf_version(void) { return vkfuse::version(); }
const char* vkf_last_error(void) { return vkfuse::c_api::last_error().c_str(); }
const char* vkf_status_name(vkf_status status) { return vkfuse::error_code_name(static_cast<ErrorCode>(status)); }
const char* vkf_dtype_name(vkf_dtype dtype) { return valid_dtype(dtype) ? vkfuse::dtype_name(static_cast<vkfuse::DType>(dtype)) : "?"; }
size_t vkf_dtype_size(vkf_dtype dtype) { return valid_dtype(dtype) ? vkfuse::dtype_size(static_cast<vkfuse::DType>(dtype)) : 0; }

vkf_status vkf_devices(const vkf_device_info** devices, size_t* count) {
  if (devices == nullptr || count == nullptr) return invalid("vkf_devices", "devices or count is NULL");
  thread_local DeviceStrings t_devices;
  auto listed = vkfuse::list_devices();
  if (!listed.ok()) return fail(listed.status());
  t_devices.summaries = std::move(*listed);
  t_devices.infos.clear();
  for (const vkfuse::DeviceSummary& s : t_devices.summaries) t_devices.infos.push_back(device_info(s));
  *devices = t_devices.infos.data();
  *count = t_devices.infos.size();
  return VKF_OK;
}

vkf_status vkf_context_create(const vkf_context_options* options, vkf_context** context) {
  if (context == nullptr) return invalid("vkf_context_create", "context is NULL");
  vkfuse::ContextOptions o;
  if (options != nullptr) {
    o.device = options->device != nullptr ? options->device : "";
    o.validation = options->validation != 0;
    if (options->cache_dir != nullptr) o.cache_dir = options->cache_dir;
  }
  auto created = vkfuse::Context::create(o);
  if (!created.ok()) return fail(created.status());
  auto* handle = new (std::nothrow) vkf_context{std::move(*created), {}};
  if (handle == nullptr) return fail(VKF_OUT_OF_MEMORY, "vkf_context_create: out of host memory");
  handle->device = handle->context.device();
  *context = handle;
  return VKF_OK;
}

void vkf_context_destroy(vkf_context* context) { delete context; }

vkf_status vkf_context_device(const vkf_context* context, vkf_device_info* info) {
  if (context == nullptr || info == nullptr) return invalid("vkf_context_device", "context or info is NULL");
  *info = device_info(context->device);
  return VKF_OK;
}

vkf_status vkf_model_load_onnx(const char* path, const vkf_load_options* options, vkf_model** model) {
  if (path == nullptr || model == nullptr) return invalid("vkf_model_load_onnx", "path or model is NULL");
  vkfuse::OnnxOptions o;
  if (options != nullptr) {
    if (options->precision != VKF_PRECISION_FP32 && options->precision != VKF_PRECISION_FP16)
      return invalid("vkf_model_load_onnx", "precision is neither VKF_PRECISION_FP32 nor VKF_PRECISION_FP16");
    o.float_dtype = options->precision == VKF_PRECISION_FP16 ? vkfuse::DType::kF16 : vkfuse::DType::kF32;
    if (options->batch < 0) return invalid("vkf_model_load_onnx", "batch is negative (0 keeps the model's)");
    if (options->batch > 0) o.batch = options->batch;
    if (options->input_shape_count > 0 && options->input_shapes == nullptr)
      return invalid("vkf_model_load_onnx", "input_shape_count > 0 with input_shapes NULL");
    for (size_t i = 0; i < options->input_shape_count; ++i) {
      const vkf_input_shape& s = options->input_shapes[i];
      if (s.name == nullptr || (s.rank > 0 && s.dims == nullptr))
        return invalid("vkf_model_load_onnx", "an input_shapes entry has a NULL name or dims");
      o.input_shapes[s.name] = vkfuse::Shape(s.dims, s.dims + s.rank);
    }
  }
  auto graph = vkfuse::load_onnx(path, o);
  if (!graph.ok()) return fail(graph.status());
  auto* handle = new (std::nothrow) vkf_model{};
  if (handle == nullptr) return fail(VKF_OUT_OF_MEMORY, "vkf_model_load_onnx: out of host memory");
  handle->graph = std::move(*graph);
  handle->inputs.set(handle->graph->inputs());
  handle->outputs.set(handle->graph->outputs());
  *model = handle;
  return VKF_OK;
}

vkf_status vkf_onnx_inspect(const char* path, vkf_model** model) {
  if (path == nullptr || model == nullptr) return invalid("vkf_onnx_inspect", "path or model is NULL");
  auto info = vkfuse::inspect_onnx(path);
  if (!info.ok()) return fail(info.status());
  auto* handle = new (std::nothrow) vkf_model{};
  if (handle == nullptr) return fail(VKF_OUT_OF_MEMORY, "vkf_onnx_inspect: out of host memory");
  handle->inputs.set(std::move(info->inputs));
  handle->outputs.set(std::move(info->outputs));
  *model = handle;
  return VKF_OK;
}

void vkf_model_destroy(vkf_model* model) { delete model; }

size_t vkf_model_input_count(const vkf_model* model) { return model ? model->inputs.descs.size() : 0; }
size_t vkf_model_output_count(const vkf_model* model) { return model ? model->outputs.descs.size() : 0; }
vkf_status vkf_model_input(const vkf_model* model, size_t index, vkf_tensor_info* info) {
  if (model == nullptr) return invalid("vkf_model_input", "model is NULL");
  return model->inputs.get(index, info, "vkf_model_input");
}
vkf_status vkf_model_output(const vkf_model* model, size_t index, vkf_tensor_info* info) {
  if (model == nullptr) return invalid("vkf_model_output", "model is NULL");
  return model->outputs.get(index, info, "vkf_model_output");
}

vkf_status vkf_session_create(vkf_context* context, const vkf_model* model, const vkf_session_options* options,
                              vkf_session** session) {
  if (context == nullptr || model == nullptr || session == nullptr)
    return invalid("vkf_session_create", "context, model or session is NULL");
  if (!model->graph) return invalid("vkf_session_create", "the model came from vkf_onnx_inspect; load it with vkf_model_load_onnx");
  vkfuse::SessionOptions o;
  if (options != nullptr) {
    o.fusion = options->disable_fusion == 0;
    o.profile = options->disable_profiling == 0;
  }
  auto created = vkfuse::Session::create(context->context, *model->graph, o);
  if (!created.ok()) return fail(created.status());
  auto* handle = new (std::nothrow) vkf_session{std::move(*created), {}, {}, {}};
  if (handle == nullptr) return fail(VKF_OUT_OF_MEMORY, "vkf_session_create: out of host memory");
  for (const vkfuse::GroupInfo& group : handle->session.groups()) handle->labels.push_back(group.label);
  *session = handle;
  return VKF_OK;
}

void vkf_session_destroy(vkf_session* session) { delete session; }

vkf_status vkf_session_run(vkf_session* session, const vkf_tensor* inputs, size_t input_count) {
  if (session == nullptr) return invalid("vkf_session_run", "session is NULL");
  if (input_count > 0 && inputs == nullptr) return invalid("vkf_session_run", "input_count > 0 with inputs NULL");
  std::map<std::string, vkfuse::HostTensor> feeds;
  for (size_t i = 0; i < input_count; ++i) {
    const vkf_tensor& t = inputs[i];
    vkfuse::HostTensor host;
    if (vkf_status bad = vkfuse::c_api::host_tensor(t, "vkf_session_run", &host); bad != VKF_OK) return bad;
    const std::string where = std::string("vkf_session_run: input '") + t.name + "'";
    if (!feeds.emplace(t.name, std::move(host)).second) return fail(VKF_INVALID_ARGUMENT, where + " is given twice");
  }
  auto outputs = session->session.run(feeds);
  if (!outputs.ok()) return fail(outputs.status());
  const std::lock_guard<std::mutex> lock(session->outputs_mutex);
  session->outputs = std::move(*outputs);
  return VKF_OK;
}

vkf_status vkf_session_output(const vkf_session* session, const char* name, vkf_tensor* output) {
  if (session == nullptr || name == nullptr || output == nullptr)
    return invalid("vkf_session_output", "session, name or output is NULL");
  const std::lock_guard<std::mutex> lock(session->outputs_mutex);
  auto it = session->outputs.find(name);
  if (it == session->outputs.end()) {
    if (session->outputs.empty()) return fail(VKF_NOT_FOUND, "vkf_session_output: no run has completed yet");
    std::string known;
    for (const auto& [known_name, tensor] : session->outputs) known += (known.empty() ? "'" : ", '") + known_name + "'";
    return fail(VKF_NOT_FOUND, std::string("vkf_session_output: no output '") + name + "' (outputs: " + known + ")");
  }
  const vkfuse::HostTensor& t = it->second;
  *output = {it->first.c_str(), static_cast<vkf_dtype>(t.dtype), t.shape.size(), t.shape.data(),
             t.bytes.data(), t.bytes.size()};
  return VKF_OK;
}

size_t vkf_session_group_count(const vkf_session* session) { return session ? session->session.dispatch_count() : 0; }

vkf_status vkf_session_group(const vkf_session* session, size_t index, vkf_group_info* info) {
  if (session == nullptr || info == nullptr) return invalid("vkf_session_group", "session or info is NULL");
  const std::vector<vkfuse::GroupInfo> groups = session->session.groups();
  if (index >= groups.size())
    return fail(VKF_INVALID_ARGUMENT, "vkf_session_group: index " + std::to_string(index) + " is past the " +
                                          std::to_string(groups.size()) + " groups");
  *info = {session->labels[index].c_str(), groups[index].op_count, groups[index].gpu_ms};
  return VKF_OK;
}

size_t vkf_session_dispatch_count(const vkf_session* session) { return session ? session->session.dispatch_count() : 0; }
double vkf_session_gpu_ms(const vkf_session* session) { return session ? session->session.last_gpu_ms() : 0.0; }
double vkf_session_create_ms(const vkf_session* session) { return session ? session->session.create_stats().total_ms : 0.0; }

}  // extern "C"
