// The `vkfuse` CLI's subcommands. Each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace vkfuse::cli {

using Args = std::vector<std::string>;

int run_devices(const Args& args);  // vkfuse devices [--json]
int run_demo(const Args& args);     // vkfuse demo [--batch N] [--boxes N]

// True when `flag` is among the args.
bool has_flag(const Args& args, const std::string& flag);
// The value after `flag`, or `fallback`.
std::string flag_value(const Args& args, const std::string& flag, const std::string& fallback);

}  // namespace vkfuse::cli
