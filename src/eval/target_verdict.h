#pragma once
// The target-instruction verdict: what the static and the dynamic checks established about the
// required instruction families (executed, not executed, absent in the SASS, profile error, deferred).

#include "verdict/verdict.h"

namespace ptxbench::eval {

/// True when the static counts hold at least one instruction of a required family.
bool required_present(const verdict& v, const std::optional<family_counts>& counts);

/// Decides v.targets.verdict and its reason from v's static counts, outcome and dynamic check.
void decide_target_verdict(verdict& v);

}  // namespace ptxbench::eval
