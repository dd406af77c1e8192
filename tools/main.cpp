// vkfuse: the command-line tool. The commands' options are CLI11's; this file assembles them, prints
// help with the usage line first, and turns parse errors into one line that names the command and,
// for a typo, the nearest command or flag.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"

namespace vkfuse::cli {
namespace {

constexpr std::size_t kHelpWidth = 100;
constexpr std::size_t kFlagColumn = 26;

// `text` broken into lines of at most `width` characters at spaces; its own line breaks stay.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t newline = std::min(text.find('\n', begin), text.size());
    std::string line;
    std::size_t start = begin;
    while (start < newline) {
      const std::size_t space = std::min(text.find(' ', start), newline);
      const std::string word = text.substr(start, space - start);
      if (!line.empty() && line.size() + 1 + word.size() > width) {
        out += line + "\n";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
      start = space + 1;
    }
    out += line;
    if (newline == text.size()) break;
    out += "\n";
    begin = newline + 1;
  }
  return out;
}

// CLI11's help with the usage line first (as `git` and `cmake` print theirs), then the description,
// option descriptions wrapped beside their flags.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() {
    label("Usage", "usage");
    column_width(kFlagColumn);
  }
  std::string make_option_desc(const CLI::Option* option) const override {
    return wrap(CLI::Formatter::make_option_desc(option), kHelpWidth - kFlagColumn);
  }
  std::string make_description(const CLI::App* app) const override {
    return wrap(app->get_description(), kHelpWidth) + "\n";
  }
  std::string make_footer(const CLI::App* app) const override {
    const std::string footer = app->get_footer();
    return footer.empty() ? "" : wrap(footer, kHelpWidth) + "\n";
  }
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    return make_usage(app, name) + make_description(app) + make_positionals(app) + make_groups(app, mode) +
           make_subcommands(app, mode) + '\n' + make_footer(app);
  }
};

constexpr const char* kRootFooter =
    "vkfuse <command> --help: that command's options.\n"
    "environment: VKFUSE_DEVICE, VKFUSE_VALIDATION, VKFUSE_DISABLE_FUSION, VKFUSE_CACHE_DIR,\n"
    "             VKFUSE_COMPILE_THREADS, VKFUSE_DUMP_DIR, VKFUSE_LOG (see README.md)";

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

// What CLI11 left over: an option it does not know (with the nearest one it does) or a stray argument.
std::string leftover_message(const CLI::App& app, const std::vector<std::string>& extras) {
  for (const std::string& extra : extras) {
    if (extra.size() < 2 || extra[0] != '-') continue;
    const std::string flag = extra.substr(0, extra.find('='));
    const std::string guess = nearest(flag, flag_names(app));
    return "unknown option '" + flag + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)");
  }
  return "unexpected argument '" + extras.front() + "'";
}

int usage_error(const CLI::App& app, const std::string& message) {
  const bool root = app.get_parent() == nullptr;
  const std::string name = root ? "vkfuse" : "vkfuse " + app.get_name();
  std::fprintf(stderr, "%s: %s\n%s(%s --help for the options)\n", name.c_str(), message.c_str(),
               HelpFormatter().make_usage(&app, name).c_str(), name.c_str());
  return 2;
}

int run_cli(int argc, char** argv) {
  CLI::App root("vkfuse runs ONNX models on any Vulkan GPU, fusing operators into few compute shaders.", "vkfuse");
  root.formatter(std::make_shared<HelpFormatter>());
  root.allow_extras();
  root.require_subcommand(0, 1);
  root.set_help_flag("-h,--help", "prints this help");  // before the commands, which copy it
  bool version = false;
  root.add_flag("--version", version, "prints the version");
  const std::vector<Command> commands = {add_devices(root), add_demo(root),  add_run(root),
                                         add_plan(root),    add_bench(root), add_startup(root)};
  for (const Command& command : commands) command.app->allow_extras();
  root.footer(kRootFooter);  // after the commands, which would inherit it
  if (argc < 2) {
    std::fputs(root.help().c_str(), stderr);
    return 2;
  }
  if (argc == 2 && std::string(argv[1]) == "version") version = true;
  try {
    if (!version) root.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    const std::vector<CLI::App*> given = root.get_subcommands();
    std::fputs((given.empty() ? root.help() : given.front()->help("vkfuse")).c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& error) {
    const std::vector<CLI::App*> given = root.get_subcommands();
    return usage_error(given.empty() ? root : *given.front(), error.what());
  }
  if (version) {
    std::printf("vkfuse %s\n", vkfuse::version());
    return 0;
  }
  for (const Command& command : commands) {
    if (!command.app->parsed()) continue;
    if (const std::vector<std::string> extras = command.app->remaining(); !extras.empty())
      return usage_error(*command.app, leftover_message(*command.app, extras));
    return command.run();
  }
  const std::vector<std::string> extras = root.remaining();
  if (!extras.empty() && extras.front()[0] != '-') {
    std::vector<std::string> names = {"--version"};
    for (const Command& command : commands) names.push_back(command.app->get_name());
    const std::string guess = nearest(extras.front(), names);
    return usage_error(root, "unknown command '" + extras.front() + "'" + (guess.empty() ? "" : " (did you mean '" + guess + "'?)"));
  }
  return usage_error(root, extras.empty() ? "no command given" : leftover_message(root, extras));
}

}  // namespace
}  // namespace vkfuse::cli

int main(int argc, char** argv) { return vkfuse::cli::run_cli(argc, argv); }
