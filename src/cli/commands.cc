#include "cli/commands.h"

namespace ptxbench::cli {

const std::vector<command>& all_commands() {
  static const std::vector<command> table = {
      {"tasks", "list the task suite, show one task as the model sees it, or export tasks for coding agents (Harbor)",
       add_tasks_command},
      {"check", "gate, build, link-gate and statically check a candidate kernel (no GPU needed)", add_check_command},
      {"eval", "the whole pipeline on the local GPU: sanitize, correctness, timing, runtime instruction check",
       add_eval_command},
      {"sass", "static SASS check of a built kernel; with --ncu, which families executed", add_sass_command},
      {"prompt", "render the exact system and user messages a model receives for a task", add_prompt_command},
      {"run", "run the multi-turn agent: model writes kernels, the pipeline evaluates, feedback goes back", add_run_command},
      {"metrics", "turn/trajectory correctness rates, best speedups and Fast_p from trajectories or upstream data",
       add_metrics_command},
      {"report", "one self-contained HTML report (tables, Fast_p and speedup curves, turn strips)", add_report_command},
      {"serve", "the evaluation service: upstream-compatible HTTP API over a durable job queue", add_serve_command},
      {"worker", "a worker of the evaluation service (CPU stages or GPU stages)", add_worker_command},
      {"jobs", "the evaluation service's queue: depth, workers, throughput, slowest jobs", add_jobs_command},
      {"fixit", "Fixit repair data: mine failed turns, repair them with a teacher, pair, write rationales",
       add_fixit_command},
      {"kernelgen", "KernelGen data: a teacher's correct kernels with a second teacher's rationale", add_kernelgen_command},
      {"sft", "SFT rows for train/ (Fixit or KernelGen), and the paper's dataset recipes s0-s6", add_sft_command},
      {"notes", "repair notes for the supervision arms: collect from Fixit pairs, check, schema", add_notes_command},
      {"mcp", "a Model Context Protocol server on stdio: list, show, check and evaluate tasks from a coding agent",
       add_mcp_command},
  };
  return table;
}

}  // namespace ptxbench::cli
