#pragma once
// The job the orchestrator hands to ptxbench-harness and the result it gets back. Both are JSON
// files; the orchestrator never shares memory or code with the harness, and the harness never
// loads candidate code itself.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "eval/gpu_options.h"
#include "eval/physical_floor.h"
#include "eval/verdict.h"
#include "suite/definition.h"
#include "suite/task.h"
#include "suite/workload.h"

namespace ptxbench::eval {

struct job_candidate {
  std::string id;                          ///< echoed back in the result
  std::filesystem::path shared_object;
  std::string symbol = "run";
  std::vector<std::string> required_families;  ///< for the dynamic check
  bool static_present = true;              ///< false: the static check found no required family
  bool static_known = false;               ///< false: no disassembler ran (deferred)
};

struct harness_job {
  std::string task_name;
  definition def;
  workload wl;
  std::string baseline;
  ordered_json baseline_options;
  tolerance tol;
  int correctness_trials = 3;
  std::vector<job_candidate> candidates;
  gpu_options options;
  std::filesystem::path runner;
  std::filesystem::path cuda_root;
  std::filesystem::path cache_dir;
  std::filesystem::path work_dir;
  uint64_t seed = 0;
  std::optional<floor_inputs> physical_floor;  ///< the task's work and the target's peaks; nullopt = no floor
};

ordered_json to_json(const harness_job& job);
result<harness_job> harness_job_from_json(const ordered_json& j);

/// What the harness established for one candidate: the GPU stages' records and results, in the
/// verdict's own types so the orchestrator merges them without translation.
struct candidate_outcome {
  std::string id;
  std::optional<eval_status> status;
  std::string outcome;         ///< passed | runtime_error | incorrect_* | timeout | infra_error
  std::string deciding_stage;
  std::string message;
  std::string log;             ///< sanitizer fault, candidate error text, candidate output
  std::vector<stage_record> stages;
  std::optional<correctness_summary> correctness;
  std::optional<timing_summary> timing;
  std::optional<family_counts> dynamic_counts;
  std::map<std::string, family_counts> dynamic_per_kernel;
  std::string dynamic_method;
  std::string dynamic_error;   ///< non-empty: the profile could not be taken (profile_error)
  bool dynamic_ran = false;
};

ordered_json to_json(const candidate_outcome& c);

/// Copies what the harness established into a verdict that already holds the CPU stages: appends
/// the GPU stage records and sets status, outcome, message, log, correctness, timing and the
/// dynamic instruction counts.
void merge_into(const candidate_outcome& c, verdict& v);
result<candidate_outcome> candidate_outcome_from_json(const ordered_json& j);

}  // namespace ptxbench::eval
