#pragma once
// One trajectory: give the model the task, take the kernel it writes, evaluate it, feed the result
// back, repeat up to the turn limit or until a target-correct kernel reaches the target speedup.
// Only kernel outcomes consume turns; a model API or infrastructure failure stops the trajectory
// where it is, and the next run resumes it from its last completed turn.

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>

#include "agent/eval_queue.h"
#include "agent/history.h"
#include "agent/prompt.h"
#include "agent/provider.h"
#include "agent/provider_factory.h"
#include "agent/turn_supervision.h"
#include "suite/task.h"

namespace ptxbench::agent {

struct trajectory_spec {
  const task* t = nullptr;
  const target_info* target = nullptr;
  std::string variant;
  std::string language = "cuda";         ///< "cuda" (kernel.cu) or "triton" (kernel.py)
  int index = 0;
  int turn_limit = 8;
  double target_speedup = 1.2;
  history_policy policy = history_policy::full;
  std::optional<int64_t> budget_tokens;  ///< prompt budget (budget policy, or the context window less the output)
  uint64_t seed = 0;
  std::filesystem::path file;
  std::string model_name;
  ordered_json model_json;               ///< info.config.model
  ordered_json environment_json;         ///< info.config.environment
  bool run_on_gpu = true;
  int eval_retries = 1;                  ///< extra attempts after an infrastructure failure
  double eval_retry_delay_s = 10;
  turn_supervision supervision;          ///< prompt-time supervision (guidance, repair notes); empty: none
};

/// What the sweep hears after each turn (also for turns loaded from disk on resume).
struct turn_report {
  int turn = 0;
  eval_outcome label = eval_outcome::no_code;
  bool correct = false;
  bool target_correct = false;
  std::optional<double> speedup;
  bool from_disk = false;
};

enum class trajectory_end {
  submitted,         ///< target met
  limits_exceeded,   ///< every turn used
  context_exceeded,  ///< the prompt cannot fit even with every old pair dropped
  auth_error,        ///< the key was refused: the sweep must stop
  api_error,         ///< the model API failed after its retries
  infra_error,       ///< the evaluator failed after its retries
  stopped,           ///< asked to stop (Ctrl-C, or another trajectory's failure)
  setup_error,       ///< could not start (prompt, unreadable or mismatched file)
};

/// Returns "submitted", "limits_exceeded", ... (for logs and tests).
std::string trajectory_end_name(trajectory_end e);

struct trajectory_result {
  trajectory_end end = trajectory_end::setup_error;
  std::string message;        ///< one line: what happened
  int turns_completed = 0;
  int turns_run_now = 0;      ///< turns this call added
  bool skipped = false;       ///< already finished on disk, nothing to do
};

struct loop_services {
  provider* model = nullptr;
  eval_slots* evaluators = nullptr;
  prompt_builder prompts;
  const std::atomic<bool>* stop = nullptr;           ///< checked before each model call
  std::function<void(const turn_report&)> on_turn;   ///< may be empty
  sleeper sleep;                                     ///< for the evaluation retry delay; null = real sleep
};

/// Runs (or resumes) one trajectory, writing its file after every turn. Never throws.
trajectory_result run_trajectory(const trajectory_spec& spec, loop_services& services);

/// The solution the evaluator gets for a turn's code: one kernel.cu, entry kernel.cu::run (CUDA), or
/// one kernel.py, entry kernel.py::run, spec.language "triton" (Triton).
solution make_turn_solution(const trajectory_spec& spec, int turn, const std::string& code);

}  // namespace ptxbench::agent
