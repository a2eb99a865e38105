#pragma once
// The one rule for a name that a run records and the metrics read back: the model label, the task,
// the target and the prompt variant of a trajectory. `ptxbench run` checks it before it starts, so
// it never writes a trajectory that `ptxbench metrics` would later refuse (metrics requires these
// fields to be non-empty strings; tables, CSV rows and file names also need them on one line).

#include <string>

#include "core/result.h"

namespace ptxbench {

/// Refuses an empty name and one holding control characters (a newline, a tab, NUL ...), naming
/// `what` ("--model") in the one-line message.
status check_record_name(const std::string& name, const std::string& what);

}  // namespace ptxbench
