#pragma once
// A sweep: task × prompt variant × trajectory, run concurrently (model calls in parallel, GPU
// evaluations through the bounded queue), resumable with the same command after a kill at any
// moment. RUN_DIR holds plan.json (what was asked), trajectories/*.json and summary.json (what
// happened, recomputed from the trajectory files).

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/eval_queue.h"
#include "agent/history.h"
#include "agent/model_config.h"
#include "agent/prompt.h"
#include "agent/provider.h"
#include "agent/provider_factory.h"
#include "agent/turn_supervision.h"
#include "core/exit_status.h"
#include "suite/task.h"

namespace ptxbench::agent {

struct plan_item {
  int index = 0;
  std::string task, target, variant;
  int trajectory_index = 0;
  uint64_t seed = 0;
  std::string file;  ///< relative to RUN_DIR, e.g. "trajectories/gemm__h200__minimal__t0.json"
  /// The trajectory's own system and task messages (Fixit repairs: one wrong kernel each); null:
  /// rendered by sweep_services::prompts from (task, target, variant).
  std::shared_ptr<const prompt_pair> prompts;
  ordered_json source;  ///< what the item was planned from, recorded in plan.json; null for `ptxbench run`
};

struct sweep_options {
  std::filesystem::path out_dir;
  std::vector<std::string> tasks;
  std::string target = "h200";
  std::string language = "cuda";      ///< the candidates' language: "cuda" or "triton" (--language)
  std::vector<std::string> variants;  ///< names or indices within each task's family ("0" = first)
  int trajectories = 4;
  int turns = 8;
  double target_speedup = 1.2;
  history_policy policy = history_policy::full;
  std::optional<int64_t> context_budget_tokens;  ///< --context-budget
  int parallel = 4;          ///< trajectories at once
  int gpus = 1;              ///< evaluation slots
  bool run_on_gpu = true;
  int eval_retries = 1;
  double eval_retry_delay_s = 10;
  uint64_t seed = 0;
  std::string evaluator_name = "pipeline";
  /// plan.json's "supervision" (arm, guidance and notes files with their sha256, retrieval settings,
  /// exclusion policy); null: none. A re-run with a different value is refused.
  ordered_json supervision;
  std::vector<std::string> argv;
  bool progress_bar = false;  ///< redraw a bar (stderr is a terminal) instead of one line per trajectory
  bool quiet = false;         ///< no progress output at all
};

/// Turns a --variants entry into the variant's name for a task ("1" -> "multicast" for GEMM on
/// sm90a); fails for a variant the task's family does not have.
using variant_resolver =
    std::function<result<std::string>(const task& t, const target_info& target, const std::string& spec)>;

/// Each task with its resolved variant names, in --tasks order.
using task_variants = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct sweep_services {
  const suite* tasks = nullptr;
  const model_spec* model = nullptr;
  provider* llm = nullptr;                    ///< shared by every trajectory; must be thread-safe
  evaluator_factory make_evaluator;
  prompt_builder prompts;
  variant_resolver resolve_variant;              ///< null: variant names are used as given
  const std::atomic<bool>* interrupt = nullptr;  ///< Ctrl-C
  /// The supervision of one planned trajectory (its prompt is already supervised through `prompts`);
  /// null: none.
  std::function<turn_supervision(const plan_item&)> supervise;
  sleeper sleep;
  std::FILE* log = stderr;
};

struct sweep_outcome {
  exit_status status = exit_status::ok;
  std::string message;   ///< one line; for a stop, what stopped it and how to resume
  ordered_json summary;  ///< what summary.json holds
};

/// Checks the tasks and target and resolves every task's variants (duplicates dropped); also
/// renders each prompt once so a bad variant fails before any model call.
result<task_variants> resolve_task_variants(const sweep_options& o, const sweep_services& s);

/// Expands the plan: for each task, each of its variants, trajectories 0..n-1; each gets a seed
/// derived from (base seed, task, target, variant, index) so reruns and other models see the same seeds.
std::vector<plan_item> expand_plan(const sweep_options& o, const task_variants& variants);

/// The plan.json document.
ordered_json plan_json(const sweep_options& o, const std::vector<plan_item>& plan, const model_spec& m,
                       const std::string& arch);

/// Fails (naming the first difference) when an existing plan.json asked for something else.
status check_plan_compatible(const ordered_json& existing, const ordered_json& wanted);

/// Runs (or resumes) the sweep. Fails only for bad input (unknown task, incompatible RUN_DIR, an
/// evaluator that cannot start); failures during the run are in the outcome.
result<sweep_outcome> run_sweep(const sweep_options& o, sweep_services& s);

/// Runs (or resumes) an explicit plan (`ptxbench fixit repair` plans one trajectory per wrong
/// kernel) with the same lock, plan.json check, workers, evaluation slots, progress and summary as
/// run_sweep. `plan_doc` is what plan.json must hold (plan_json plus anything the caller adds);
/// every item's task must exist and target o.target.
result<sweep_outcome> run_plan(const sweep_options& o, sweep_services& s, const std::vector<plan_item>& plan,
                               ordered_json plan_doc);

}  // namespace ptxbench::agent
