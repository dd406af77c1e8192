#include "codegen/kernel_dump.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "backend/log.h"
#include "codegen/spirv_optimizer.h"

namespace vkfuse {
namespace {

// "Sub -> Mul -> Add" -> "Sub_Mul_Add": file-name safe ("-" separates the key).
std::string sanitize(std::string_view label) {
  std::string out;
  for (char c : label) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (keep) out += c;
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  if (out.size() > 80) out.resize(80);
  return out.empty() ? "group" : out;
}

void write_file(const std::filesystem::path& path, std::string_view text) {
  std::ofstream file(path, std::ios::binary);
  file.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!file) log_message(LogLevel::kWarn, "VKFUSE_DUMP_DIR: cannot write " + path.string());
}

}  // namespace

std::string dump_directory() {
  const char* env = std::getenv("VKFUSE_DUMP_DIR");
  return env ? env : "";
}

void dump_kernel(std::string_view label, std::string_view key_hex, std::string_view source,
                 const std::vector<std::uint32_t>& spirv, std::string_view log) {
  const std::string dir = dump_directory();
  if (dir.empty()) return;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  const std::filesystem::path base = std::filesystem::path(dir) / (sanitize(label) + "-" + std::string(key_hex));
  write_file(base.string() + ".comp", source);
  if (!spirv.empty()) write_file(base.string() + ".spvasm", disassemble_spirv(spirv));
  write_file(base.string() + ".log", log);
}

}  // namespace vkfuse
