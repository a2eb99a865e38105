#pragma once
// The two ends of the wiring between the harness and the runner (docs/sandbox.md, "Wiring"):
//  - harness: which policy a runner gets (its scratch folder, its candidate, the tool it runs
//    under), sent in the "setup" message as "sandbox"; and what a dead runner's log and wait status
//    say about a violation;
//  - runner: apply what the setup message asks for, before the candidate is opened, and answer with
//    the report (sent back in "ready", recorded in the verdict's environment).

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "sandbox/sandbox_policy.h"

namespace ptxbench::sandbox {

/// compute-sanitizer or ncu by the wrapper's program name; none for an empty wrapper.
tool_mode tool_for_wrapper(const std::vector<std::string>& wrapper);

/// The policy for one runner: runner_policy() with the tool taken from the wrapper.
sandbox_policy policy_for_runner(const std::filesystem::path& scratch_dir, const std::filesystem::path& candidate_so,
                                 const std::vector<std::string>& wrapper);

/// Runner side: applies setup["sandbox"] (a policy in to_json form). Returns the report as JSON for
/// the "ready" message. A setup without "sandbox" applies nothing and returns
/// {"applied": false, "reason": "..."} so the verdict still says so. An error (bad policy, a required
/// protection unavailable) means the runner must not load the candidate.
result<nlohmann::ordered_json> apply_requested_sandbox(const nlohmann::ordered_json& setup);

/// Harness side: the sandbox's message for a runner that died, from its log and waitpid status:
/// the handler's line ("sandbox: attempted execve"), or, for a death by SIGSYS without one,
/// "sandbox: blocked system call (the report was suppressed)", or, for the handler's exit code
/// (violation_exit_code) without one, a message saying the report is missing. nullopt: not the
/// sandbox.
std::optional<std::string> violation_message(std::string_view log, int wait_status, bool have_status);

}  // namespace ptxbench::sandbox
