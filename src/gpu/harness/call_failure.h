#pragma once
// How a runner call that did not succeed ends the evaluation. Pure functions over what the
// runner_client observed, kept apart from the harness (no CUDA, no device) so the CPU tests can
// check every mapping, the sandbox's included.

#include <string>
#include <string_view>

#include "gpu/harness/runner_client.h"
#include "verdict/outcome.h"

namespace ptxbench::gpu {

/// The call_result for a runner that died: `death` says how ("exited with code 86"), `during`
/// what it was doing, `log` is its output and wait_status its waitpid status (have_status false
/// when it was not reaped). When the sandbox ended it (its line in the log, or death by SIGSYS),
/// sandbox_violation carries the sandbox's message (docs/sandbox.md, "Reporting").
call_result crashed_call(const std::string& death, const std::string& during, std::string_view log, int wait_status,
                         bool have_status);

/// The outcome follows from how the call failed (a sandbox violation, a load error, a timeout, a
/// crash) or, for a refusal by the entry point, from its ABI error kind — never from the text of
/// its message. A sandbox violation is a RUNTIME_ERROR whose message is exactly the sandbox's
/// ("sandbox: attempted execve"), whichever stage's call it was.
struct call_failure {
  eval_outcome outcome;
  std::string message;
};
call_failure classify_call_failure(const call_result& r, const std::string& during);

/// The refusal of a Triton launch plan the runner cannot replay ("the launch plan cannot be
/// replayed: WHY"), whether the capture reported it or the harness found it building the plan.
std::string unreplayable_plan(const std::string& why);

}  // namespace ptxbench::gpu
