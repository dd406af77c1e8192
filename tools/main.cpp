// vkfuse: the command-line tool.
#include <cstdio>
#include <cstring>

#include "commands.h"

namespace vkfuse::cli {

bool has_flag(const Args& args, const std::string& flag) {
  for (const std::string& a : args)
    if (a == flag) return true;
  return false;
}

std::string flag_value(const Args& args, const std::string& flag, const std::string& fallback) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1];
  return fallback;
}

}  // namespace vkfuse::cli

namespace {

void print_usage() {
  std::puts(
      "usage: vkfuse <command> [options]\n"
      "\n"
      "commands:\n"
      "  devices [--json]                 list Vulkan devices, drivers and the limits vkfuse plans with\n"
      "  demo [--batch N] [--boxes N]     run the embedded GIoU-loss graph and an elementwise chain,\n"
      "                                   fused and unfused, against the CPU reference\n"
      "\n"
      "environment: VKFUSE_DEVICE, VKFUSE_VALIDATION, VKFUSE_DISABLE_FUSION, VKFUSE_CACHE_DIR,\n"
      "             VKFUSE_DUMP_DIR, VKFUSE_LOG (see README.md)");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    print_usage();
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  const vkfuse::cli::Args args(argv + 2, argv + argc);
  if (command == "devices") return vkfuse::cli::run_devices(args);
  if (command == "demo") return vkfuse::cli::run_demo(args);
  std::fprintf(stderr, "vkfuse: unknown command '%s'\n\n", command.c_str());
  print_usage();
  return 2;
}
