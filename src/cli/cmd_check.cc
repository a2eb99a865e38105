// `ptxbench check KERNEL.cu --task NAME [--target h200|b200] [--json]`: the CPU half of the pipeline
// (source gate → build → link gate → static SASS), no GPU needed.
#include "cli/candidate_command.h"
#include "cli/commands.h"

namespace ptxbench::cli {

void add_check_command(CLI::App& app, context& ctx) {
  auto* cmd = app.add_subcommand("check", "gate, build, link-gate and statically check a candidate kernel (no GPU)");
  auto opts = std::make_shared<candidate_options>();
  add_candidate_options(*cmd, *opts);
  cmd->callback([&ctx, opts]() { ctx.exit = run_candidates(ctx, *opts, false); });
}

}  // namespace ptxbench::cli
