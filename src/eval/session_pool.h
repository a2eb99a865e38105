#pragma once
// Long-lived harness sessions (eval/harness_session.h) kept per task, protocol and device, so every
// client of the GPU stages — `ptxbench eval`, the agent's evaluator, a GPU worker of the service —
// sets a task up once and then only evaluates. A pool is used by one thread at a time.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "eval/harness_session.h"

namespace ptxbench::eval {

class session_pool {
 public:
  /// At most `max_sessions` harnesses alive at once; the least recently used is closed first.
  explicit session_pool(int max_sessions = 2) : m_max(max_sessions < 1 ? 1 : max_sessions) {}

  /// Runs the GPU stages for one candidate in the session for (task, target, config) — started, or
  /// restarted after a failure, as needed — and completes its verdict. An error is infrastructure:
  /// the harness could not be started or set up, or it failed on this candidate (that session is
  /// closed; the next call starts a fresh one). `session_started` (optional) tells whether this call
  /// had to start the harness.
  status evaluate(const task& t, const target_info& target, const pipeline_config& config, gpu_candidate& candidate,
                  const std::atomic<bool>* cancel = nullptr, bool* session_started = nullptr);

  /// The session that served the last evaluate() (nullptr before any): its pid, setup time and count.
  [[nodiscard]] const harness_session* last() const { return m_last; }

 private:
  struct entry {
    std::unique_ptr<task> t;  ///< the session's own copy of the task (it outlives the caller's)
    std::unique_ptr<harness_session> session;
    uint64_t last_used = 0;
  };
  int m_max;
  std::map<std::string, entry> m_sessions;
  uint64_t m_clock = 0;
  const harness_session* m_last = nullptr;
};

/// What makes two harness jobs interchangeable: the task (and its tolerance), the target and every
/// GPU option the harness applies.
std::string session_key(const task& t, const target_info& target, const pipeline_config& config);

}  // namespace ptxbench::eval
