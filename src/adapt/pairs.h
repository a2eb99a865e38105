#pragma once
// `ptxbench fixit pairs`: (wrong kernel, its feedback) → correct kernel, from repair runs
// (upstream's collect_success_kernel_pairs, upstream-ptxbench.md §9.1 source-03). A repair turn makes
// a pair when its label is `passed`; `--require-target` also asks that a required instruction
// family was verified as executed at run time (upstream's dynamic SASS tag "H"), `--min-speedup`
// bounds the speedup. Pairs are de-duplicated by content: one pair per (task, wrong kernel, correct
// kernel). The directory's layout is in docs/adaptation.md ("The pairs directory").

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adapt/error_type.h"
#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::adapt {

inline constexpr const char* k_pairs_format = "ptxbench.fixit-pairs/1";

enum class pair_select { all, first, best };
std::optional<pair_select> parse_pair_select(const std::string& s);
std::string pair_select_name(pair_select s);

struct pairs_options {
  std::vector<std::filesystem::path> repair_dirs;
  std::filesystem::path mined_dir;        ///< empty: the one each repair run's plan.json names
  bool require_target = false;
  std::optional<double> min_speedup;
  pair_select select = pair_select::all;  ///< all correct repair turns (upstream), the first, or the fastest
  int cap_per_definition = -1;            ///< after de-duplication, seeded and stratified (post-balancing); < 0: none
  uint64_t seed = 0;
  std::vector<std::string> argv;
};

/// Collects the pairs and writes OUT (staged). Returns the manifest. Fails when no pair is left.
result<ordered_json> collect_pairs(const pairs_options& o, const std::filesystem::path& out);

/// One pair with every text it names, read back from a pairs directory.
struct pair_row {
  std::string id, task, target, arch, variant;
  adapt::error_type type = error_type::compile;
  std::string label;
  std::string system_prompt, task_prompt;
  struct {
    std::string mined_id, model, trajectory;
    int turn = 0;
    std::string kernel, log, reply, feedback;
  } wrong;
  struct {
    std::string model, trajectory;
    int turn = 0;
    std::string kernel, reply;
    ordered_json verdict;
    bool target_correct = false;
    std::string target_verdict;
    std::optional<double> speedup;
  } correct;
  ordered_json json;  ///< the line of pairs.jsonl as read
};

/// Reads PAIRS/pairs.jsonl and every file its rows name, checking each sha256; a missing or changed
/// file is a one-line error naming the pair.
result<std::vector<pair_row>> load_pairs(const std::filesystem::path& dir);

}  // namespace ptxbench::adapt
