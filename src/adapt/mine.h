#pragma once
// `ptxbench fixit mine`: the failed turns of one or more runs, as Fixit's raw material (upstream's
// select_failed_kernels + filter_fixit_error_kernels_by_prompt_tag + the rebalanced collection,
// upstream-ptxbench.md §9.1 source-01). By default a turn is mined as upstream mined it: its label is a
// kernel failure upstream counted (compile, runtime, numerical, timeout; shape and dtype failures
// were upstream's "Other error" and are skipped), the reply ends with a closing code fence (upstream
// skipped replies with text after the fence or a cut-off block), and it passes the variant, task
// and turn filters. Then at most `cap.cap` rows per task are kept, spread over (error type, turn)
// strata by upstream's largest-remainder rule (stratified_cap.h); a task with fewer rows than the
// cap stops the mining with an error, as upstream's did. Every other behaviour is an option.

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "adapt/mined_row.h"
#include "adapt/stratified_cap.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

struct mine_options {
  std::vector<std::filesystem::path> run_dirs;
  cap_options cap;                    ///< cap < 0: no cap
  std::vector<std::string> variants;  ///< keep only these prompt variants; empty: all
  std::vector<int> turns;             ///< keep only these turns (0-based); empty: all
  std::vector<std::string> tasks;     ///< keep only these tasks; empty: all
  /// The suite's tasks: a kept turn of any other task is an error (it could never be repaired or
  /// evaluated here). Empty: not checked.
  std::vector<std::string> known_tasks;
  bool allow_non_fenced = false;      ///< also mine replies that do not end with a closing fence
  bool include_shape_dtype = false;   ///< also mine incorrect_shape / incorrect_dtype (as numerical)
  bool dedupe_kernels = false;        ///< mine identical kernels of a task and variant once
  std::vector<std::string> argv;      ///< recorded in the manifest
};

/// Whether a reply ends with a closing code fence once trailing whitespace is dropped (upstream's
/// test: `content.rstrip().endswith("```")`).
bool ends_with_closing_fence(const std::string& reply);

/// Everything mined before the cap, with the reasons turns were left out.
struct mine_candidates {
  std::vector<mined_row> rows;
  std::map<std::string, int> excluded;  ///< reason → turns
  int turns_read = 0;
  int trajectories_read = 0, trajectories_not_started = 0;
  ordered_json inputs = ordered_json::array();  ///< per run: dir, plan sha256, model, evaluator, trajectory hashes
};

/// Reads the runs and returns every minable failed turn (no cap yet).
result<mine_candidates> collect_failures(const mine_options& o);

/// Mines and writes OUT (staged: OUT appears complete or not at all). Returns the manifest.
result<ordered_json> mine_failures(const mine_options& o, const std::filesystem::path& out);

/// Parses a turn list "0-4,6" into {0,1,2,3,4,6}; fails on anything else.
result<std::vector<int>> parse_turn_list(const std::string& spec);

}  // namespace ptxbench::adapt
