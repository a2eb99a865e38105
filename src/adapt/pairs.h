#pragma once
// `ptxbench fixit pairs`: (wrong kernel, its feedback) → correct kernel, from repair runs
// (upstream's collect_success_kernel_pairs as source-03 ran it, upstream-ptxbench.md §9.1). By default
// a repair turn makes a pair as upstream's did: its label is `passed`, a required instruction family
// was verified as executed at run time (upstream's dynamic SASS tag "H"), and its speedup is at least
// 0 (`--min-speedup 0.0`); every correct turn of a repair makes a pair (`--correct-kernel-mode all`).
// Options: `require_target = false` (correct is enough), another minimum speedup, the first or
// fastest turn per repair, de-duplication by content (one pair per task, wrong kernel and correct
// kernel), and a post-balancing cap (not upstream's; largest remainder over the wrong rows' strata).
// Each pair also keeps the repair trajectory's system prompt and first user message (the repair
// prompt): the reasoning teacher sees them, as upstream's did. The directory's layout is in
// docs/adaptation.md ("The pairs directory").

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "adapt/error_type.h"
#include "adapt/stratified_cap.h"
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
  bool require_target = true;             ///< upstream's --arch-sass-tag H
  std::optional<double> min_speedup = 0.0;  ///< at least this speedup (upstream's --min-speedup 0.0)
  pair_select select = pair_select::all;  ///< all correct repair turns (upstream), the first, or the fastest
  bool dedupe = false;                    ///< one pair per (task, wrong kernel, correct kernel)
  cap_options cap;                        ///< post-balancing (not upstream's); underfilled tasks keep all
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
  /// The repair trajectory's system prompt and first user message (the knowledge pack and the
  /// repair prompt: what upstream's reasoning teacher was shown). Empty in pairs directories written
  /// before they were kept.
  std::string repair_system_prompt, repair_prompt;
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
