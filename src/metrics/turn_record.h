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
#include "eval/verdict.h"

namespace ptxbench::metrics {

/// How a turn ended, for error analysis. Read from structured results (our trajectory's
/// extra.ptxbench.label, upstream's `correctness` column), never from feedback text.
enum class turn_label {
  correct,            ///< every workload PASSED
  compilation_error,  ///< nvcc (or the link step) failed
  runtime_error,      ///< crashed, faulted, or the sanitizer found a memory error
  numerical_error,    ///< ran but the output is wrong (values, shape or dtype)
  timeout,            ///< the kernel (or its evaluation) ran out of time
  extraction_error,   ///< no code block could be taken from the reply
  gate_rejected,      ///< the library gate refused it (cuBLAS/cuDNN, dynamic loading ...)
  built,              ///< a CPU-only run (`run --cpu-only`) built it; correctness was not established
  infra_error,        ///< our side broke; not a turn: excluded from every count
  other_error,        ///< upstream's "Other error" (only in imported data)
};

inline constexpr std::array<turn_label, 10> k_all_labels = {
    turn_label::correct,          turn_label::compilation_error, turn_label::runtime_error,
    turn_label::numerical_error,  turn_label::timeout,            turn_label::extraction_error,
    turn_label::gate_rejected,    turn_label::built,             turn_label::infra_error,
    turn_label::other_error};

/// Returns the snake_case name used in JSON and CSV ("compilation_error").
std::string_view label_name(turn_label l);
/// Returns the name for people and chart legends ("Compilation error").
std::string_view label_title(turn_label l);
/// Returns the label with that snake_case name, or nullopt.
std::optional<turn_label> parse_label(std::string_view name);

struct turn_record {
  std::string model;
  std::string target;          ///< "h200", "b200"; empty for upstream rows (only the family is known)
  std::string arch;            ///< ours: "sm_90a"; upstream: "hopper" | "blackwell"
  std::string definition;      ///< the task (FlashInfer definition name)
  std::string exp_dir;         ///< the run: our run directory, or upstream's exp_dir
  std::string variant;         ///< prompt variant; empty when the source does not say
  std::string trajectory;      ///< unique within exp_dir
  int turn = 0;                ///< 0-based; infra-error retries repeat the turn number
  turn_label label = turn_label::other_error;
  std::string source_label;    ///< the label exactly as the source wrote it
  bool target_correct = false; ///< correct and a required family verified as executed
  std::optional<double> speedup;          ///< reference / candidate; only meaningful when correct
  std::string target_verdict;             ///< ours: eval::target_verdict name; empty when unknown
  std::string arch_tag;                   ///< upstream's dynamic SASS tag ("H, B"); empty for ours
  std::optional<eval::family_counts> static_counts;   ///< SASS instructions per family
  std::optional<eval::family_counts> dynamic_counts;  ///< predicate-on thread instructions per family
  /// Work coverage (eval/coverage.h): the largest known share of the task's work a required family
  /// did; nullopt when unknown (upstream rows, verdicts before coverage existed, unknown coverage).
  std::optional<double> coverage;
  std::optional<int64_t> reasoning_tokens;
  std::optional<int64_t> completion_tokens;
  std::optional<double> latency_s;        ///< model reply latency
  std::optional<double> cost_usd;

  [[nodiscard]] bool correct() const { return label == turn_label::correct; }
  /// False for infra-error turns: they consumed no turn of the model and count nowhere.
  [[nodiscard]] bool counted() const { return label != turn_label::infra_error; }
};

/// The per-turn table as CSV (header plus one row per record; family counts as "GMMA=3;TMA=1").
std::string records_to_csv(const std::vector<turn_record>& records);
/// The per-turn table as a JSON array of objects (null for unknown values).
ordered_json records_to_json(const std::vector<turn_record>& records);
/// The same JSON as text, one object per line, written directly (about 5x faster than building and
/// dumping records_to_json for the 13,674 upstream turns).
std::string records_to_json_text(const std::vector<turn_record>& records);

}  // namespace ptxbench::metrics
