// ONNX external data: a tensor's bytes stored in a file next to the model, named by the TensorProto's
// external_data entries (location, offset, length).
//
// The file is judged by what was opened, not by its name: it is opened once, without following a
// final symbolic link and without blocking, and the descriptor must be a regular file with one link
// whose resolved path lies inside the model's folder; the bytes are then read from that descriptor.
// Refused, each with one error naming the tensor (`what`) and the location: an absolute location, one
// that leaves the folder (through ".." or a symbolic link), a FIFO, device, socket or directory, a
// file with more than one hard link (another name may lie outside the folder), and an offset/length
// past the end of the file. A missing file is kNotFound. Nothing here throws; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <vkfuse/status.hpp>

namespace onnx {
class TensorProto;
}

namespace vkfuse {

// The `expected` bytes of an external tensor, read from the file under `base_dir` (the model's folder;
// empty: an error, the tensor needs one). A "length" entry must equal `expected`.
Result<std::vector<std::byte>> read_external_data(const onnx::TensorProto& proto, const std::string& base_dir,
                                                  const std::string& what, std::uint64_t expected);

}  // namespace vkfuse
