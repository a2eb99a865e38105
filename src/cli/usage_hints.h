#pragma once
// One-line messages for a command line CLI11 cannot take: no subcommand, a misspelled subcommand,
// an unknown option (with a "did you mean" among the options of the subcommand it was given to).

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ptxbench::cli {

/// "unknown command 'tsks' (did you mean 'tasks'?)" when the first word is not a subcommand.
std::optional<std::string> misspelled_command(const CLI::App& app, const std::vector<std::string>& args);

/// The message for a failed parse: names the unknown option and the closest known one, lists the
/// subcommands when none was given, and otherwise keeps CLI11's own text.
std::string parse_error_message(const CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e);

}  // namespace ptxbench::cli
