#include "gpu/harness/runner_sandbox.h"

namespace ptxbench::gpu {

ordered_json sandbox_record(const call_result& started, bool requested) {
  if (!requested) return {{"applied", false}, {"reason", "disabled for this evaluation (--no-sandbox)"}};
  if (started.sandbox.is_object()) return started.sandbox;
  std::string why;
  switch (started.outcome) {
    case call_outcome::ok: why = "the runner sent no sandbox report"; break;
    case call_outcome::timed_out: why = "the runner did not answer before reporting its sandbox"; break;
    case call_outcome::crashed:
      why = "the runner ended before reporting its sandbox" +
            (started.sandbox_violation.empty() ? std::string() : " (" + started.sandbox_violation + ")");
      break;
    case call_outcome::failed: why = "the runner failed before reporting its sandbox: " + started.message; break;
  }
  return {{"applied", nullptr}, {"reason", why}};
}

}  // namespace ptxbench::gpu
