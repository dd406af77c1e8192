// Tensor files by extension: .npy (host/onnx/npy.h) and ONNX TensorProto .pb (host/onnx/tensor_proto.h).
#include <vkfuse/tensor_io.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "host/onnx/npy.h"
#include "host/onnx/tensor_proto.h"

namespace vkfuse {
namespace {

std::string lower_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

Status check_readable(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return make_error(ErrorCode::kNotFound, path + ": no such file");
  if (!std::filesystem::is_regular_file(status)) return make_error(ErrorCode::kIo, path + ": not a regular file");
  return {};
}

Result<std::vector<std::byte>> read_whole_file(const std::string& path) {
  VKFUSE_TRY(check_readable(path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::kIo, path + ": cannot open (" + std::strerror(errno) + ")");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) return make_error(ErrorCode::kIo, path + ": cannot read its size");
  std::vector<std::byte> bytes(static_cast<std::size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    return make_error(ErrorCode::kIo, path + ": read failed after " + std::to_string(in.gcount()) + " of " +
                                          std::to_string(size) + " bytes");
  return bytes;
}

}  // namespace

Result<HostTensor> read_tensor_file(const std::string& path) {
  const std::string ext = lower_extension(path);
  if (ext != ".npy" && ext != ".pb")
    return make_error(ErrorCode::kInvalidArgument,
                      path + ": unknown tensor file type '" + ext + "' (expected .npy or an ONNX TensorProto .pb)");
  if (ext == ".pb") {
    // The TensorProto reader (host/onnx/tensor_proto.h) owns the ONNX side: protobuf parsing, dtype
    // conversion, size checks and external data relative to the file's folder.
    VKFUSE_TRY(check_readable(path));
    VKFUSE_ASSIGN_OR_RETURN(TensorFile file, read_tensor_pb_file(path));
    return std::move(file.tensor);
  }
  VKFUSE_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, read_whole_file(path));
  return decode_npy(bytes, path);
}

Status write_npy(const std::string& path, const HostTensor& tensor) {
  auto encoded = encode_npy(tensor);
  if (!encoded.ok()) return encoded.status().with_context(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error(ErrorCode::kIo, path + ": cannot create (" + std::strerror(errno) + ")");
  out.write(reinterpret_cast<const char*>(encoded->data()), static_cast<std::streamsize>(encoded->size()));
  out.close();
  if (!out) return make_error(ErrorCode::kIo, path + ": write failed (" + std::strerror(errno) + ")");
  return {};
}

}  // namespace vkfuse
