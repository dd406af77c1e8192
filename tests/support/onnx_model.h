// Small ONNX models built in the test that uses them (hostile graphs: values defined twice, shapes that
// overflow, external data in a scratch folder), so that each case is readable next to its check.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <vkfuse/types.hpp>

#include "onnx.pb.h"

namespace vkfuse::testing {

// A ModelProto of IR version 8 importing ai.onnx `opset`, with an empty graph to fill in.
class OnnxModel {
 public:
  explicit OnnxModel(int opset = 13);

  OnnxModel& input(const std::string& name, const Shape& shape);   // a float graph input
  OnnxModel& output(const std::string& name, const Shape& shape);  // a float graph output
  OnnxModel& node(const std::string& op, const std::vector<std::string>& inputs, const std::vector<std::string>& outputs,
                  const std::string& name = "");
  OnnxModel& floats(const std::string& name, const Shape& shape, const std::vector<float>& values);  // raw_data initializer
  OnnxModel& int64s(const std::string& name, const std::vector<std::int64_t>& values);              // 1-D INT64 initializer
  // A float initializer of `shape` whose data lies in `location` at `offset` (length: all of it).
  OnnxModel& external(const std::string& name, const Shape& shape, const std::string& location, std::uint64_t offset);

  std::string bytes() const;                 // serialized
  void save(const std::string& path) const;  // serialized into a file

 private:
  onnx::ModelProto proto_;
};

}  // namespace vkfuse::testing
