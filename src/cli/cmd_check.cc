#include "cli/commands.h"

namespace ptxbench::cli {
void add_check_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("check", "gate, build, link-gate and statically check a candidate kernel");
  cmd->callback([&ctx]() { ctx.exit = report_error("check: not implemented yet", exit_status::infra); });
}
}  // namespace ptxbench::cli
