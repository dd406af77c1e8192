// The Python module vkfuse._vkfuse (imported by python/vkfuse/__init__.py), shaped like ONNX
// Runtime's InferenceSession over the C++ API. Errors become vkfuse.Error with vkfuse's message.
// Inputs are copied once into the session's host tensors; outputs are handed to numpy without a copy
// (each array owns the tensor its bytes live in).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <vkfuse/onnx.hpp>
#include <vkfuse/vkfuse.hpp>

namespace py = pybind11;

namespace {

PyObject* g_error = nullptr;  // vkfuse.Error

std::string text(py::handle h) { return py::str(h).cast<std::string>(); }

// vkfuse.Error(message), with .code the error code's name ("InvalidArgument", "NotFound", ...).
[[noreturn]] void raise(const vkfuse::Status& status) {
  py::object error = py::reinterpret_borrow<py::object>(g_error)(status.message());
  error.attr("code") = vkfuse::error_code_name(status.code());
  PyErr_SetObject(g_error, error.ptr());
  throw py::error_already_set();
}
template <class T>
T unwrap(vkfuse::Result<T> result) {
  if (!result.ok()) raise(result.status());
  return std::move(result).value();
}

// ONNX Runtime's type strings.
const char* onnx_type_name(vkfuse::DType dtype) {
  switch (dtype) {
    case vkfuse::DType::kF32: return "tensor(float)";
    case vkfuse::DType::kF16: return "tensor(float16)";
    case vkfuse::DType::kI32: return "tensor(int32)";
    case vkfuse::DType::kBool: return "tensor(bool)";
    case vkfuse::DType::kU8: return "tensor(uint8)";
  }
  return "tensor(?)";
}

py::dtype numpy_dtype(vkfuse::DType dtype) {
  switch (dtype) {
    case vkfuse::DType::kF32: return py::dtype("float32");
    case vkfuse::DType::kF16: return py::dtype("float16");
    case vkfuse::DType::kI32: return py::dtype("int32");
    case vkfuse::DType::kBool: return py::dtype("bool");
    case vkfuse::DType::kU8: return py::dtype("uint8");
  }
  return py::dtype("float32");
}

struct NodeArg {
  std::string name;
  py::list shape;  // ints, or the symbolic name of a dim the model declares symbolic (inspect only)
  std::string type;
  std::string repr() const { return "NodeArg(name='" + name + "', type='" + type + "', shape=" + text(shape) + ")"; }
};

NodeArg node_arg(const vkfuse::TensorDesc& d) {
  NodeArg arg{d.name, py::list(), onnx_type_name(d.dtype)};
  for (std::size_t i = 0; i < d.shape.size(); ++i) {
    if (d.shape[i] < 0 && i < d.dim_names.size())
      arg.shape.append(py::str(d.dim_names[i]));
    else
      arg.shape.append(py::int_(d.shape[i]));
  }
  return arg;
}

// A numpy array as the graph input `desc` takes it: its dtype (int64 narrowed to int32 with a range
// check, as load_onnx maps INT64), C order, the exact shape.
vkfuse::HostTensor to_host(const vkfuse::TensorDesc& desc, const py::handle& value) {
  const std::string where = "input '" + desc.name + "'";
  py::array array = py::array::ensure(value, py::array::c_style);
  if (!array) raise({vkfuse::ErrorCode::kInvalidArgument, where + " is not an array (numpy.ndarray expected)"});
  vkfuse::HostTensor host;
  host.dtype = desc.dtype;
  for (py::ssize_t d = 0; d < array.ndim(); ++d) host.shape.push_back(array.shape(d));
  if (host.shape != desc.shape)
    raise({vkfuse::ErrorCode::kInvalidArgument, where + " has shape " + vkfuse::shape_to_string(host.shape) + "; the model takes " +
                                                    vkfuse::shape_to_string(desc.shape)});
  const py::dtype want = numpy_dtype(desc.dtype);
  const std::size_t bytes = static_cast<std::size_t>(host.numel()) * vkfuse::dtype_size(desc.dtype);
  host.bytes.resize(bytes);
  if (array.dtype().is(want) || array.dtype().equal(want)) {
    std::memcpy(host.bytes.data(), array.data(), bytes);
  } else if (desc.dtype == vkfuse::DType::kI32 && array.dtype().equal(py::dtype("int64"))) {
    const auto* src = static_cast<const std::int64_t*>(array.data());
    auto* dst = reinterpret_cast<std::int32_t*>(host.bytes.data());
    for (std::int64_t i = 0; i < host.numel(); ++i) {
      if (src[i] < std::numeric_limits<std::int32_t>::min() || src[i] > std::numeric_limits<std::int32_t>::max())
        raise({vkfuse::ErrorCode::kInvalidArgument, where + ": element " + std::to_string(i) + " (" + std::to_string(src[i]) +
                                                        ") does not fit in int32, which vkfuse runs int64 as"});
      dst[i] = static_cast<std::int32_t>(src[i]);
    }
  } else {
    raise({vkfuse::ErrorCode::kInvalidArgument, where + " is " + text(array.dtype()) + "; the model takes " +
                                                    text(want) + " (" + onnx_type_name(desc.dtype) + ")"});
  }
  return host;
}

// The tensor's bytes as an array that owns the tensor: no copy.
py::array to_numpy(vkfuse::HostTensor tensor) {
  auto owned = std::make_unique<vkfuse::HostTensor>(std::move(tensor));
  const py::dtype dtype = numpy_dtype(owned->dtype);
  std::vector<py::ssize_t> shape(owned->shape.begin(), owned->shape.end());
  void* data = owned->bytes.data();
  py::capsule keeper(owned.get(), [](void* p) { delete static_cast<vkfuse::HostTensor*>(p); });
  owned.release();
  return py::array(dtype, shape, {}, data, keeper);
}

vkfuse::ContextOptions context_options(const std::optional<std::string>& device, const std::optional<std::string>& cache_dir) {
  vkfuse::ContextOptions o;
  if (device) o.device = *device;
  if (cache_dir) o.cache_dir = *cache_dir;
  return o;
}

class InferenceSession {
 public:
  InferenceSession(const std::string& path, const std::string& precision, bool fusion, const std::optional<std::string>& device,
                   std::optional<std::int64_t> batch, const std::map<std::string, std::vector<std::int64_t>>& input_shapes,
                   const std::optional<std::string>& cache_dir) {
    vkfuse::OnnxOptions load;
    if (precision == "fp16")
      load.float_dtype = vkfuse::DType::kF16;
    else if (precision != "fp32")
      raise({vkfuse::ErrorCode::kInvalidArgument, "precision '" + precision + "': expected 'fp32' or 'fp16'"});
    load.batch = batch;
    for (const auto& [name, shape] : input_shapes) load.input_shapes[name] = shape;
    vkfuse::Graph graph = unwrap(vkfuse::load_onnx(path, load));
    inputs_ = graph.inputs();
    outputs_ = graph.outputs();
    precision_ = precision;
    context_.emplace(unwrap(vkfuse::Context::create(context_options(device, cache_dir))));
    vkfuse::SessionOptions options;
    options.fusion = fusion;
    session_.emplace(unwrap(vkfuse::Session::create(*context_, graph, options)));
  }

  std::vector<NodeArg> get_inputs() const { return args(inputs_); }
  std::vector<NodeArg> get_outputs() const { return args(outputs_); }

  py::list run(const std::optional<std::vector<std::string>>& output_names, const py::dict& feeds) {
    std::map<std::string, vkfuse::HostTensor> hosts;
    for (const auto& [key, value] : feeds) {
      const std::string name = py::str(key);
      const vkfuse::TensorDesc* desc = find(inputs_, name);
      if (desc == nullptr) raise({vkfuse::ErrorCode::kInvalidArgument, "'" + name + "' is not an input of the model (inputs: " + names(inputs_) + ")"});
      hosts.emplace(name, to_host(*desc, value));
    }
    std::vector<std::string> wanted;
    if (output_names) {
      for (const std::string& name : *output_names)
        if (find(outputs_, name) == nullptr)
          raise({vkfuse::ErrorCode::kInvalidArgument, "'" + name + "' is not an output of the model (outputs: " + names(outputs_) + ")"});
      wanted = *output_names;
    } else {
      for (const vkfuse::TensorDesc& d : outputs_) wanted.push_back(d.name);
    }
    auto ran = [&] {
      py::gil_scoped_release unlocked;  // the GPU work; other Python threads go on meanwhile
      return session_->run(hosts);
    }();
    std::map<std::string, vkfuse::HostTensor> results = unwrap(std::move(ran));
    py::list out;
    for (const std::string& name : wanted) {
      auto it = results.find(name);
      if (it == results.end()) raise({vkfuse::ErrorCode::kInternal, "the run gave no output '" + name + "'"});
      out.append(to_numpy(std::move(it->second)));
    }
    return out;
  }

  // The fused groups in execution order, with the last run's GPU time of each.
  py::list plan() const {
    py::list groups;
    for (const vkfuse::GroupInfo& g : session_->groups()) {
      py::dict d;
      d["label"] = g.label;
      d["ops"] = g.op_count;
      d["gpu_ms"] = g.gpu_ms;
      groups.append(d);
    }
    return groups;
  }
  double last_gpu_ms() const { return session_->last_gpu_ms(); }
  std::size_t dispatch_count() const { return session_->dispatch_count(); }
  bool fusion() const { return session_->fusion_enabled(); }
  const std::string& precision() const { return precision_; }
  std::string device() const { return context_->device().name; }
  double create_ms() const { return session_->create_stats().total_ms; }

 private:
  static std::vector<NodeArg> args(const std::vector<vkfuse::TensorDesc>& descs) {
    std::vector<NodeArg> out;
    for (const vkfuse::TensorDesc& d : descs) out.push_back(node_arg(d));
    return out;
  }
  static const vkfuse::TensorDesc* find(const std::vector<vkfuse::TensorDesc>& descs, const std::string& name) {
    for (const vkfuse::TensorDesc& d : descs)
      if (d.name == name) return &d;
    return nullptr;
  }
  static std::string names(const std::vector<vkfuse::TensorDesc>& descs) {
    std::string text;
    for (const vkfuse::TensorDesc& d : descs) text += (text.empty() ? "'" : ", '") + d.name + "'";
    return text;
  }

  std::vector<vkfuse::TensorDesc> inputs_, outputs_;
  std::string precision_;
  std::optional<vkfuse::Context> context_;
  std::optional<vkfuse::Session> session_;
};

}  // namespace

PYBIND11_MODULE(_vkfuse, m) {
  m.doc() = "vkfuse: ONNX models on any Vulkan GPU, made fast by operator fusion";
  m.attr("__version__") = vkfuse::version();
  g_error = PyErr_NewExceptionWithDoc("vkfuse.Error", "A vkfuse call failed: str() is vkfuse's message, .code the error code's name", PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(g_error);

  py::class_<NodeArg>(m, "NodeArg")
      .def_readonly("name", &NodeArg::name)
      .def_readonly("shape", &NodeArg::shape)
      .def_readonly("type", &NodeArg::type)
      .def("__repr__", &NodeArg::repr);

  m.def("get_devices", [] {
    py::list out;
    for (const vkfuse::DeviceSummary& d : unwrap(vkfuse::list_devices())) {
      py::dict info;
      info["index"] = d.index;
      info["name"] = d.name;
      info["type"] = d.type;
      info["driver"] = d.driver;
      info["api_version"] = d.api_version;
      info["device_local_bytes"] = d.device_local_bytes;
      info["default"] = d.default_choice;
      out.append(info);
    }
    return out;
  }, "Every Vulkan device: dicts with index, name, type, driver, api_version, device_local_bytes, default.");

  m.def("inspect", [](const std::string& path) {
    const vkfuse::OnnxModelInfo info = unwrap(vkfuse::inspect_onnx(path));
    py::dict d;
    py::list inputs, outputs;
    for (const auto& t : info.inputs) inputs.append(node_arg(t));
    for (const auto& t : info.outputs) outputs.append(node_arg(t));
    d["inputs"] = inputs;
    d["outputs"] = outputs;
    d["opset"] = info.opset;
    d["nodes"] = info.node_count;
    d["producer"] = info.producer;
    return d;
  }, py::arg("path"), "What an .onnx file declares (symbolic dims by name), without loading it.");

  py::class_<InferenceSession>(m, "InferenceSession")
      .def(py::init<const std::string&, const std::string&, bool, const std::optional<std::string>&, std::optional<std::int64_t>,
                    const std::map<std::string, std::vector<std::int64_t>>&, const std::optional<std::string>&>(),
           py::arg("path"), py::arg("precision") = "fp32", py::arg("fusion") = true, py::arg("device") = py::none(),
           py::arg("batch") = py::none(), py::arg("input_shapes") = std::map<std::string, std::vector<std::int64_t>>{},
           py::arg("cache_dir") = py::none())
      .def("get_inputs", &InferenceSession::get_inputs)
      .def("get_outputs", &InferenceSession::get_outputs)
      .def("run", &InferenceSession::run, py::arg("output_names"), py::arg("input_feed"))
      .def_property_readonly("plan", &InferenceSession::plan)
      .def_property_readonly("last_gpu_ms", &InferenceSession::last_gpu_ms)
      .def_property_readonly("dispatch_count", &InferenceSession::dispatch_count)
      .def_property_readonly("fusion", &InferenceSession::fusion)
      .def_property_readonly("precision", &InferenceSession::precision)
      .def_property_readonly("device", &InferenceSession::device)
      .def_property_readonly("create_ms", &InferenceSession::create_ms);
}
