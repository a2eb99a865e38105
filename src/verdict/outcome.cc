#include "verdict/outcome.h"

#include <string_view>

namespace ptxbench {
namespace {

struct outcome_spelling {
  std::string_view name;   ///< JSON and CSV
  std::string_view title;  ///< people, chart legends
  std::optional<eval_status> status;
};

// In the order of eval_outcome.
constexpr std::array<outcome_spelling, k_all_outcomes.size()> k_spellings = {{
    {"passed", "Correct", eval_status::PASSED},
    {"built", "Built only (CPU run)", std::nullopt},
    {"rejected", "Rejected by lib. gate", eval_status::COMPILE_ERROR},
    {"compile_error", "Compilation error", eval_status::COMPILE_ERROR},
    {"runtime_error", "Runtime error", eval_status::RUNTIME_ERROR},
    {"incorrect_shape", "Wrong shape", eval_status::INCORRECT_SHAPE},
    {"incorrect_dtype", "Wrong dtype", eval_status::INCORRECT_DTYPE},
    {"incorrect_numerical", "Numerical error", eval_status::INCORRECT_NUMERICAL},
    {"timeout", "Timeout", eval_status::TIMEOUT},
    {"no_code", "Extraction error", std::nullopt},
    {"infra_error", "Infrastructure error", std::nullopt},
    {"other_error", "Other error", std::nullopt},
}};

struct alias {
  std::string_view text;
  eval_outcome outcome;
};

// Labels of trajectory files written by PTXBench before eval_outcome existed.
constexpr std::array<alias, 5> k_legacy_labels = {{
    {"correct", eval_outcome::passed},
    {"compilation_error", eval_outcome::compile_error},
    {"numerical_error", eval_outcome::incorrect_numerical},
    {"gate_rejected", eval_outcome::rejected},
    {"extraction_error", eval_outcome::no_code},
}};

// Upstream PTXBench's `correctness` classes (benchmark/export_turn_correctness_arch.py). Its three
// timeouts are one outcome here; its "Numerical error" also covers wrong shapes and dtypes.
constexpr std::array<alias, 9> k_upstream_labels = {{
    {"Correct", eval_outcome::passed},
    {"Compilation error", eval_outcome::compile_error},
    {"Runtime error", eval_outcome::runtime_error},
    {"Numerical error", eval_outcome::incorrect_numerical},
    {"Kernel Execution Timeout", eval_outcome::timeout},
    {"Profiling Service Timeout", eval_outcome::timeout},
    {"Sanitize Timeout", eval_outcome::timeout},
    {"Extraction error", eval_outcome::no_code},
    {"Other error", eval_outcome::other_error},
}};

template <std::size_t N>
std::optional<eval_outcome> find_alias(const std::array<alias, N>& table, std::string_view text) {
  for (const auto& a : table)
    if (a.text == text) return a.outcome;
  return std::nullopt;
}

const outcome_spelling& spelling(eval_outcome o) { return k_spellings[static_cast<std::size_t>(o)]; }

}  // namespace

std::string_view outcome_name(eval_outcome o) { return spelling(o).name; }
std::string_view outcome_title(eval_outcome o) { return spelling(o).title; }
std::optional<eval_status> flashinfer_status(eval_outcome o) { return spelling(o).status; }

std::optional<eval_outcome> parse_outcome(std::string_view name) {
  for (std::size_t i = 0; i < k_spellings.size(); ++i)
    if (k_spellings[i].name == name) return k_all_outcomes[i];
  return find_alias(k_legacy_labels, name);
}

std::optional<eval_outcome> outcome_from_upstream_label(std::string_view label) {
  return find_alias(k_upstream_labels, label);
}

}  // namespace ptxbench
