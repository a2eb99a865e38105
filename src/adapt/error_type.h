#pragma once
// The failure classes Fixit learns from, as upstream grouped them (upstream-ptxbench.md §9.1:
// "Compilation error", "Runtime error", "Numerical error", "Kernel Execution Timeout"). Turns that
// hold no kernel failure — no code, an infrastructure or API failure, a gate rejection, a pass — are
// never mined; shape and dtype failures are mined (as numerical) only on request, since upstream
// counted them as "Other error" and skipped them.

#include <optional>
#include <string>

#include "verdict/outcome.h"

namespace ptxbench::adapt {

enum class error_type { compile, runtime, numerical, timeout };

/// compile_error → compile; runtime_error → runtime; incorrect_numerical/shape/dtype → numerical;
/// timeout → timeout; anything else → nullopt (not a minable failure).
std::optional<error_type> error_type_of(eval_outcome outcome);

/// "compile", "runtime", "numerical", "timeout".
std::string error_type_name(error_type t);

/// Upstream's label of the class ("Compilation error", "Runtime error", "Numerical error",
/// "Kernel Execution Timeout"): the stratified cap orders strata by it, as upstream's did.
std::string upstream_error_label(error_type t);

/// Whether upstream mined this outcome. Its turn classifier (benchmark/export_turn_correctness_arch.py)
/// counts shape and dtype failures as "Other error", which its failure selection skips; everything
/// error_type_of() maps otherwise was mined.
bool upstream_mines(eval_outcome outcome);
std::optional<error_type> parse_error_type(const std::string& name);

}  // namespace ptxbench::adapt
