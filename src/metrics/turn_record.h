#pragma once
// One turn of one trajectory, reduced to what the metrics need: who (model), where (arch, target),
// what (task, prompt variant), which turn, how it ended (label), how fast, and whether the required
// instruction family was verified as executed. Our trajectory files and upstream's per-turn export
// are both read into this one record, so every aggregate is computed the same way for both.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/json_check.h"
#include "verdict/outcome.h"
#include "verdict/verdict.h"

namespace ptxbench::metrics {

struct turn_record {
  std::string model;
  std::string target;          ///< "h200", "b200"; empty for upstream rows (only the family is known)
  std::string arch;            ///< ours: "sm_90a"; upstream: "hopper" | "blackwell"
  /// The candidates' language: "cuda" (CUDA-PTX) or "triton". Ours: info.ptxbench.language of the
  /// trajectory (files from before it existed are CUDA); upstream: "triton" when the run folder's
  /// name says so (its Triton runs are named triton-*), else "cuda".
  std::string language = "cuda";
  std::string definition;      ///< the task (FlashInfer definition name)
  std::string exp_dir;         ///< the run: our run directory, or upstream's exp_dir
  std::string variant;         ///< prompt variant; empty when the source does not say
  /// Prompt-time supervision arm (docs/supervision.md): "base", "guidance:<sha256 prefix>", "notes",
  /// "notes+kernel"; ours from info.ptxbench.supervision.arm, "base" without it and for upstream rows.
  std::string arm = "base";
  std::string trajectory;      ///< unique within exp_dir
  int turn = 0;                ///< 0-based; infra-error retries repeat the turn number
  eval_outcome label = eval_outcome::other_error;  ///< how it ended, read from structured results
                                                  ///< (our extra.ptxbench.label, upstream's `correctness`),
                                                  ///< never from feedback text
  std::string source_label;    ///< the label exactly as the source wrote it
  bool target_correct = false; ///< correct and a required family verified as executed
  std::optional<double> speedup;          ///< reference / candidate; only meaningful when correct
  std::string target_verdict;             ///< ours: target_verdict name; empty when unknown
  std::string arch_tag;                   ///< upstream's dynamic SASS tag ("H, B"); empty for ours
  std::optional<family_counts> static_counts;   ///< SASS instructions per family
  std::optional<family_counts> dynamic_counts;  ///< predicate-on thread instructions per family
  /// Work coverage (eval/coverage.h): the largest known share of the task's work a required family
  /// did; nullopt when unknown (upstream rows, verdicts before coverage existed, unknown coverage).
  std::optional<double> coverage;
  std::optional<int64_t> reasoning_tokens;
  std::optional<int64_t> completion_tokens;
  std::optional<double> latency_s;        ///< model reply latency
  std::optional<double> cost_usd;

  [[nodiscard]] bool correct() const { return label == eval_outcome::passed; }
  /// False for infra-error turns: they consumed no turn of the model and count nowhere.
  [[nodiscard]] bool counted() const { return is_candidate_outcome(label); }
};

/// The per-turn table as CSV (header plus one row per record; family counts as "GMMA=3;TMA=1").
std::string records_to_csv(const std::vector<turn_record>& records);
/// The per-turn table as a JSON array of objects (null for unknown values), one object per line. The
/// one JSON writer for turn records; it writes text directly (about 5x faster than building an
/// object model for the 13,674 upstream turns).
std::string records_to_json_text(const std::vector<turn_record>& records);

}  // namespace ptxbench::metrics
