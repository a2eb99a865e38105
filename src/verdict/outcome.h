#pragma once
// How an evaluation — or an agent's turn — ended. This is PTXBench's one vocabulary for it: the
// verdict, the agent's turn labels, trajectory files, the metrics and the report all use
// eval_outcome, and its snake_case names are the only spelling in JSON and CSV. FlashInfer's trace
// status, the names of older PTXBench files and upstream PTXBench's labels map onto it here and
// nowhere else.

#include <array>
#include <optional>
#include <string_view>

#include "suite/trace.h"

namespace ptxbench {

enum class eval_outcome {
  passed,               ///< correct on every workload (FlashInfer PASSED)
  built,                ///< CPU stages only (check mode, or a target with no GPU here): nothing ran
  rejected,             ///< the source or link gate refused it (vendor library, dynamic loading ...)
  compile_error,        ///< nvcc failed or timed out, or the artifact cannot be loaded as a candidate
  runtime_error,        ///< crashed, faulted, a memory error, a broken rule at run time
  incorrect_shape,      ///< the call was made with or produced the wrong shape / argument count
  incorrect_dtype,      ///< the kernel was exported for other element types
  incorrect_numerical,  ///< ran, but the values are wrong
  timeout,              ///< the kernel (or its evaluation) ran out of time
  no_code,              ///< an agent turn whose reply held no kernel (upstream: "Extraction error")
  infra_error,          ///< our side broke; nothing is known about the candidate, and it counts nowhere
  other_error,          ///< upstream's "Other error"; only in imported data
};

inline constexpr std::array<eval_outcome, 12> k_all_outcomes = {
    eval_outcome::passed,          eval_outcome::built,           eval_outcome::rejected,
    eval_outcome::compile_error,   eval_outcome::runtime_error,   eval_outcome::incorrect_shape,
    eval_outcome::incorrect_dtype, eval_outcome::incorrect_numerical, eval_outcome::timeout,
    eval_outcome::no_code,         eval_outcome::infra_error,     eval_outcome::other_error};

/// The snake_case name written to JSON and CSV ("compile_error").
std::string_view outcome_name(eval_outcome o);
/// The outcome with that name. Also reads the labels of trajectory files written before this
/// vocabulary existed ("correct", "compilation_error", "numerical_error", "gate_rejected",
/// "extraction_error"), so old runs stay readable.
std::optional<eval_outcome> parse_outcome(std::string_view name);
/// The name for people and chart legends ("Compilation error").
std::string_view outcome_title(eval_outcome o);

/// FlashInfer's trace status for an outcome, or nullopt when no trace status applies (built,
/// no_code, infra_error, other_error).
std::optional<eval_status> flashinfer_status(eval_outcome o);

/// Upstream PTXBench's per-turn label ("Correct", "Compilation error", "Runtime error", "Numerical
/// error", "Timeout", "Other error") as an outcome; the only place upstream's spelling is known.
std::optional<eval_outcome> outcome_from_upstream_label(std::string_view label);

/// False for outcomes that say nothing about the candidate (infra_error): such a turn consumed no
/// turn of the model and is left out of every count.
inline bool is_candidate_outcome(eval_outcome o) { return o != eval_outcome::infra_error; }

}  // namespace ptxbench
