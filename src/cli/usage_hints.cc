#include "cli/usage_hints.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "suite/task.h"

namespace ptxbench::cli {
namespace {

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  return names;
}

// The subcommand the parse reached ("ptxbench tasks show" -> show), or the app itself.
const CLI::App* deepest_parsed(const CLI::App& app) {
  const CLI::App* at = &app;
  while (!at->get_subcommands().empty()) at = at->get_subcommands().front();
  return at;
}

std::string command_path(const CLI::App* at) {
  std::string path;
  for (; at; at = at->get_parent()) path = at->get_name() + (path.empty() ? "" : " " + path);
  return path;
}

bool known_option(const CLI::App* at, const std::string& name) {
  for (; at; at = at->get_parent())
    if (at->get_option_no_throw(name)) return true;
  return false;
}

// Words on the command line that look like options ("--taks", "--taks=1", "-x"), but not negative
// numbers (values such as "--turns -1") and nothing after "--".
std::vector<std::string> option_words(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& a : args) {
    if (a == "--") break;
    bool long_opt = a.size() > 2 && a[0] == '-' && a[1] == '-';
    bool short_opt = a.size() > 1 && a[0] == '-' && a[1] != '-' && std::isalpha(static_cast<unsigned char>(a[1]));
    if (long_opt) out.push_back(a.substr(0, a.find('=')));
    if (short_opt) out.push_back(a.substr(0, 2));
  }
  return out;
}

std::vector<std::string> option_names(const CLI::App* at) {
  std::vector<std::string> names;
  for (const auto* o : at->get_options()) {
    for (const auto& l : o->get_lnames()) names.push_back("--" + l);
    for (const auto& s : o->get_snames()) names.push_back("-" + s);
  }
  return names;
}

}  // namespace

std::optional<std::string> misspelled_command(const CLI::App& app, const std::vector<std::string>& args) {
  if (args.empty() || args[0].empty() || args[0][0] == '-') return std::nullopt;
  auto names = command_names(app);
  if (std::find(names.begin(), names.end(), args[0]) != names.end()) return std::nullopt;
  return unknown_name_message("command", args[0], names, "`ptxbench --help` lists them");
}

std::string parse_error_message(const CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e) {
  // A value the option's check refused says more than any guess about other words.
  if (dynamic_cast<const CLI::ValidationError*>(&e) || dynamic_cast<const CLI::ConversionError*>(&e)) return e.what();
  const CLI::App* at = deepest_parsed(app);
  const bool at_top = at == &app;
  for (const auto& word : option_words(args)) {
    if (known_option(at, word)) continue;
    const std::string path = command_path(at);
    if (at_top) {
      // "ptxbench --taks": most likely a subcommand written as an option.
      auto bare = word.substr(word.find_first_not_of('-'));
      if (auto close = close_names(bare, command_names(app)); !close.empty())
        return fmt::format("unknown option '{}' (did you mean the subcommand '{}'?)", word, close.front());
    }
    return unknown_name_message("option", word, option_names(at), fmt::format("`{} --help` lists them", path));
  }
  if (at_top && dynamic_cast<const CLI::RequiredError*>(&e))
    return fmt::format("a subcommand is required: {}; `ptxbench --help` says what each does",
                       fmt::join(command_names(app), ", "));
  return e.what();
}

}  // namespace ptxbench::cli
