// libFuzzer target: the tensor file readers' decoding: .npy bytes (decode_npy) and ONNX TensorProto
// bytes (.pb, as read_tensor_pb_file parses and converts them, external data refused). Any input must
// end in a Status; a crash, a sanitizer report or a hang is a finding.
#include <cstddef>
#include <cstdint>
#include <span>

#include "host/onnx/npy.h"
#include "host/onnx/tensor_proto.h"
#include "onnx.pb.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  (void)vkfuse::decode_npy(std::span<const std::byte>(bytes, size), "fuzz.npy");
  onnx::TensorProto proto;
  if (size <= static_cast<std::size_t>(INT32_MAX) && proto.ParseFromArray(data, static_cast<int>(size)))
    (void)vkfuse::tensor_from_proto(proto, "", "fuzz.pb");
  return 0;
}
