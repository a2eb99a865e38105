#pragma once
// `ptxbench fixit mine`: the failed turns of one or more runs, as Fixit's raw material (upstream's
// select_failed_kernels + filter_fixit_error_kernels_by_prompt_tag + the rebalanced collection,
// upstream-ptxbench.md §9.1). A turn is mined when its label is a kernel failure (compile, runtime,
// numerical incl. shape and dtype, timeout), its reply held a kernel in a closed code block, and it
// passes the variant and turn filters; identical kernels of the same task and variant are mined once.
// Then at most `cap_per_definition` rows per task are kept, spread over (error type, turn) strata
// (stratified_cap.h).

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "adapt/mined_row.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

struct mine_options {
  std::vector<std::filesystem::path> run_dirs;
  int cap_per_definition = -1;        ///< < 0: no cap
  uint64_t seed = 0;
  std::vector<std::string> variants;  ///< keep only these prompt variants; empty: all
  std::vector<int> turns;             ///< keep only these turns (0-based); empty: all
  std::vector<std::string> tasks;     ///< keep only these tasks; empty: all
  /// The suite's tasks: a kept turn of any other task is an error (it could never be repaired or
  /// evaluated here). Empty: not checked.
  std::vector<std::string> known_tasks;
  bool include_unterminated = false;  ///< also mine replies whose code block was cut off
  std::vector<std::string> argv;      ///< recorded in the manifest
};

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
