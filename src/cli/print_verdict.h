#pragma once
// The terminal rendering of a verdict: a header, one line per stage, the deciding log, and a verdict
// line a person reads at a glance.

#include <string>

#include "core/exit_status.h"
#include "verdict/verdict.h"

namespace ptxbench::cli {

/// Multi-line human summary of a verdict (ends with a newline).
std::string verdict_text(const verdict& v, const std::string& candidate_name, bool verbose);

/// The exit status a verdict maps to (docs/cli.md lists the codes).
exit_status verdict_exit_status(const verdict& v);

}  // namespace ptxbench::cli
