#pragma once
// The subcommand table: each entry registers its options on the CLI11 app and a handler that runs
// when it is chosen. main.cc walks this table; each command lives in its own cmd_<name>.cc.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/context.h"

namespace ptxbench::cli {

struct command {
  std::string name;
  std::string summary;
  /// Adds the subcommand to `app`; its callback stores an exit status in ctx.exit.
  std::function<void(CLI::App& app, context& ctx)> add;
};

/// Every subcommand, in the order `ptxbench --help` lists them.
const std::vector<command>& all_commands();

void add_tasks_command(CLI::App& app, context& ctx);
/// `export` under `tasks` (cmd_tasks_export.cc).
void add_tasks_export_subcommand(CLI::App& tasks, context& ctx);
void add_check_command(CLI::App& app, context& ctx);
void add_eval_command(CLI::App& app, context& ctx);
void add_sass_command(CLI::App& app, context& ctx);
void add_prompt_command(CLI::App& app, context& ctx);
void add_run_command(CLI::App& app, context& ctx);
void add_metrics_command(CLI::App& app, context& ctx);
void add_report_command(CLI::App& app, context& ctx);
void add_serve_command(CLI::App& app, context& ctx);
void add_worker_command(CLI::App& app, context& ctx);
void add_jobs_command(CLI::App& app, context& ctx);
void add_fixit_command(CLI::App& app, context& ctx);
void add_kernelgen_command(CLI::App& app, context& ctx);
void add_sft_command(CLI::App& app, context& ctx);
/// `reason` under `fixit` or `kernelgen` (cmd_reason.cc).
void add_reason_subcommand(CLI::App& parent, context& ctx, const std::string& command, const std::string& source_help);
void add_notes_command(CLI::App& app, context& ctx);
void add_mcp_command(CLI::App& app, context& ctx);

}  // namespace ptxbench::cli
