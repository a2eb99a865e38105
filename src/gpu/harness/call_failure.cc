#include "gpu/harness/call_failure.h"

#include <fmt/format.h>

#include "sandbox/runner_integration.h"

namespace ptxbench::gpu {

call_result crashed_call(const std::string& death, const std::string& during, std::string_view log, int wait_status,
                         bool have_status) {
  call_result r;
  r.outcome = call_outcome::crashed;
  r.message = fmt::format("the candidate process {} during {}", death, during);
  if (auto v = sandbox::violation_message(log, wait_status, have_status)) r.sandbox_violation = *v;
  return r;
}

call_failure classify_call_failure(const call_result& r, const std::string& during) {
  // First: a runner the sandbox ended says what the candidate attempted; how it died adds nothing.
  if (r.outcome == call_outcome::crashed && !r.sandbox_violation.empty())
    return {eval_outcome::runtime_error, r.sandbox_violation};
  if (r.load_error) return {eval_outcome::compile_error, r.message};
  switch (r.outcome) {
    case call_outcome::timed_out: return {eval_outcome::timeout, r.message};
    case call_outcome::crashed: return {eval_outcome::runtime_error, r.message};
    default: break;
  }
  switch (r.error_kind) {
    case candidate_error::argument_count:
    case candidate_error::shape: return {eval_outcome::incorrect_shape, r.message};
    case candidate_error::dtype: return {eval_outcome::incorrect_dtype, r.message};
    case candidate_error::compile: return {eval_outcome::compile_error, r.message};
    // Only a Triton capture reports it (its plan stage decides first); a refusal wherever it appears.
    case candidate_error::unreplayable: return {eval_outcome::rejected, unreplayable_plan(r.message)};
    case candidate_error::exception:
    case candidate_error::unspecified: break;
  }
  return {eval_outcome::runtime_error, during + ": " + r.message};
}

std::string unreplayable_plan(const std::string& why) { return "the launch plan cannot be replayed: " + why; }

}  // namespace ptxbench::gpu
