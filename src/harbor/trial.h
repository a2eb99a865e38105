#pragma once
// Reading Harbor's output for PTXBench tasks: a job directory holds one folder per trial, and a
// trial folder holds result.json (Harbor's TrialResult: task, agent, model, exception), config.json,
// agent/ (the agent's logs; agent/trajectory.json is its ATIF trajectory where the agent writes one)
// and verifier/ (what tests/test.sh wrote: reward.txt, ptxbench.json, verdict.json, kernel.cu).

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "harbor/atif_trajectory.h"

namespace ptxbench::harbor {

/// verifier/ptxbench.json ("ptxbench.harbor-verifier/1"), written by an exported tests/test.sh.
struct verifier_summary {
  std::string task, target, variant;
  std::string arch;              ///< the target's arch (sm_90a); empty in a summary that predates it
  std::string kernel_state;      ///< "present" | "missing" | "empty" | "too_large" | "not_text"
  std::string outcome;           ///< an eval_outcome name; empty when nothing was decided
  bool target_correct = false;
  std::optional<int> reward;     ///< nullopt: the verifier could not evaluate (an infrastructure failure)
  std::optional<double> speedup;
  std::optional<int> exit_code;  ///< of `ptxbench eval`; nullopt when it did not run
  std::string message;
};

/// Reads a verifier summary; fails with the JSON path of a missing or mistyped field, or another format.
result<verifier_summary> verifier_summary_from_json(const ordered_json& j);

struct trial {
  std::string name;                  ///< the folder's name (unique within its job)
  std::filesystem::path dir;
  std::string task_name;             ///< Harbor's task name (result.json), empty when unknown
  std::string agent, agent_version;  ///< result.json agent_info, else config.json, else the ATIF agent
  std::string model;                 ///< likewise; empty when no file names one
  std::string exception;             ///< result.json exception_info ("Type: message"), empty when none
  std::optional<double> reward;      ///< verifier/reward.txt
  std::optional<verifier_summary> summary;
  std::optional<ordered_json> final_verdict;  ///< verifier/verdict.json
  std::string final_kernel;          ///< verifier/kernel.cu, the kernel the verifier evaluated
  std::optional<atif_trajectory> trajectory;  ///< agent/trajectory.json
  /// Files that exist but could not be read or are not JSON ("<path>: <why>"): missing data, not wrong data.
  std::vector<std::string> unreadable;
};

/// True for a folder that looks like a Harbor trial: it has agent/ or verifier/ inside.
bool is_trial_dir(const std::filesystem::path& dir);

/// The trial folders of a Harbor job directory, sorted by name; the directory itself when it is a
/// trial. Fails when it is neither (one line naming the folder and what was expected).
result<std::vector<std::filesystem::path>> trial_dirs(const std::filesystem::path& dir);

/// Reads one trial. Files that are missing or unreadable are left out (unreadable ones listed in
/// `unreadable`); a file that is JSON but wrong (a verdict.json that is not a verdict, a malformed
/// ATIF trajectory or verifier summary, a reward.txt that is not a number) fails the read, naming it.
result<trial> read_trial(const std::filesystem::path& dir);

}  // namespace ptxbench::harbor
