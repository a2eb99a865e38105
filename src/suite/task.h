#pragma once
// A PTXBench task: a Definition and its evaluated Workload, plus what PTXBench adds on top of the
// FlashInfer-Trace schema: which GPUs it targets, the baseline library, tolerance and trial count.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "suite/definition.h"
#include "suite/work_model.h"
#include "suite/workload.h"

namespace ptxbench {

/// A GPU a task can target (data: suite/targets.json).
struct target_info {
  std::string name;          ///< "h100", "h200", "b200"
  std::string gpu_name;      ///< the device name nvidia-smi prints
  std::string arch;          ///< "sm_90a"
  std::string gencode;       ///< "arch=compute_90a,code=sm_90a"
  std::string arch_family;   ///< "hopper" | "blackwell"
  std::string pack;          ///< knowledge-pack folder under packs/
  std::vector<std::string> required_families;  ///< any one executed makes a turn target-correct
  std::string verification;  ///< "runtime" (a GPU of this kind can run here) | "static_only"
  std::optional<target_peaks> peaks;  ///< for the physical floor; nullopt = no floor for this target
};

struct tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
};

struct task {
  std::string name;
  std::string problem;          ///< prompt-variant family: "gemm" | "mha_fwd" | "mha_bwd" | "gqa"
  definition def;
  workload wl;
  std::string baseline;         ///< "cublaslt_gemm" | "cudnn_sdpa_fwd" | "cudnn_sdpa_bwd" | "" (pending)
  ordered_json baseline_options = ordered_json::object();  ///< e.g. {"causal": true}
  tolerance tol;
  int correctness_trials = 3;
  std::vector<std::string> targets;
  std::string status;           ///< "ready" | "reference_pending"
  bool held_out = false;
  std::string note;
  std::optional<work_formulas> work_formula;  ///< "work" in tasks.json; nullopt = not stated
  std::optional<task_work> work;              ///< the formulas at the evaluated workload's axes
  std::filesystem::path definition_path, workload_path;
};

struct suite {
  std::filesystem::path root;
  std::vector<task> tasks;
  std::map<std::string, target_info> targets;

  [[nodiscard]] const task* find_task(const std::string& name) const;
  [[nodiscard]] const target_info* find_target(const std::string& name) const;
  /// The target whose GPU this is: the one whose gpu_name is exactly the model the driver reports
  /// ("NVIDIA H100 80GB HBM3" → h100), else the one whose name is a word of the model ("NVIDIA H100
  /// PCIe" → h100; "NVIDIA GH200" is none). An error names the GPU and the suite's targets.
  [[nodiscard]] result<const target_info*> target_for_gpu(const std::string& gpu_model) const;
};

/// Loads suite/targets.json, suite/tasks.json and every definition and workload they name, and
/// validates each (workloads against their definitions).
result<suite> load_suite(const std::filesystem::path& root);

/// A task and target of the suite that an evaluation can use.
struct evaluation_pair {
  const task* t = nullptr;
  const target_info* target = nullptr;
};

/// Resolves the names an evaluation request carries, once, against the suite: both exist, the task
/// lists the target, and — for a GPU run — the task's reference exists. Every failure is the
/// caller's input (one line, with a "did you mean" where one is close).
result<evaluation_pair> resolve_evaluation(const suite& s, const std::string& task_name, const std::string& target_name,
                                           bool run_on_gpu);

/// Names close to `name` (edit distance <= 3), for "did you mean" hints.
std::vector<std::string> close_names(const std::string& name, const std::vector<std::string>& candidates);

/// "unknown task 'x' (did you mean 'y'?)" or "unknown task 'x'; `ptxbench tasks` lists them".
std::string unknown_name_message(const std::string& kind, const std::string& name,
                                 const std::vector<std::string>& candidates, const std::string& list_hint);

}  // namespace ptxbench
