#include "sandbox/runner_integration.h"

#include <signal.h>
#include <sys/wait.h>

#include <fmt/format.h>

#include "sandbox/apply_sandbox.h"
#include "sandbox/violation_reporter.h"

namespace ptxbench::sandbox {
namespace fs = std::filesystem;

tool_mode tool_for_wrapper(const std::vector<std::string>& wrapper) {
  if (wrapper.empty()) return tool_mode::none;
  std::string name = fs::path(wrapper.front()).filename().string();
  if (name.find("compute-sanitizer") != std::string::npos) return tool_mode::compute_sanitizer;
  if (name == "ncu" || name.find("nsight") != std::string::npos || name.find("nv-nsight-cu") != std::string::npos)
    return tool_mode::nsight_compute;
  return tool_mode::none;
}

sandbox_policy policy_for_runner(const fs::path& scratch_dir, const fs::path& candidate_so,
                                 const std::vector<std::string>& wrapper) {
  // The CUDA root is not passed: /usr (/usr/local/cuda) and /opt (/opt/nvidia/nsight-compute) are read
  // paths already; a toolkit elsewhere would be added here.
  return runner_policy(scratch_dir, candidate_so, {}, tool_for_wrapper(wrapper));
}

result<nlohmann::ordered_json> apply_requested_sandbox(const nlohmann::ordered_json& setup) {
  if (!setup.is_object() || !setup.contains("sandbox") || setup.at("sandbox").is_null())
    return nlohmann::ordered_json{{"applied", false}, {"reason", "the harness asked for no sandbox"}};
  auto policy = policy_from_json(setup.at("sandbox"));
  if (!policy) return policy.err();
  auto report = apply_sandbox(*policy);
  if (!report) return report.err();
  auto j = to_json(*report);
  j["applied"] = true;
  return j;
}

std::optional<std::string> violation_message(std::string_view log, int wait_status, bool have_status) {
  if (auto v = find_violation(log)) return v;
  if (have_status && WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGSYS)
    return std::string("sandbox: blocked system call (the report was suppressed)");
  // The handler's exit code without its line (the log was cut, or the candidate chose the code):
  // still the sandbox's business, but the message claims no particular call.
  if (have_status && WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == violation_exit_code)
    return fmt::format("sandbox: the runner exited with the sandbox's code {} but left no report", violation_exit_code);
  return std::nullopt;
}

}  // namespace ptxbench::sandbox
