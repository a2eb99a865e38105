#pragma once
// The one speedup a verdict reports: the timing stage's median per-pair ratio, else the FlashInfer
// trace's (a verdict that came through upstream's format). Used for the agent's turn records and
// for turns read back from coding agents' runs, so both report the same number.

#include <optional>

#include "verdict/verdict.h"

namespace ptxbench {

/// The speedup against the baseline, or nullopt when the verdict has none. Meaningful only for a
/// passed verdict; callers decide whether to report it.
std::optional<double> reported_speedup(const verdict& v);

}  // namespace ptxbench
