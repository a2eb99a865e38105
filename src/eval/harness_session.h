#pragma once
// One trusted harness kept running for many candidates of one task (`ptxbench-harness --serve-fds`),
// so a GPU worker of the evaluation service sets a task's baseline up once instead of once per
// candidate. Each candidate still runs in a fresh, sandboxed runner process that the harness starts;
// what stays alive is only the trusted side (the reference, the buffers, the input generator).
//
// A session is one child process and two pipes. A harness that dies, hangs past the candidate's
// deadline or reports an infrastructure failure ends the session (the caller starts a new one); the
// candidate's own failures are verdicts and leave the session running.

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>

#include "core/json_check.h"
#include "core/line_channel.h"
#include "core/result.h"
#include "eval/gpu_stage.h"
#include "eval/pipeline.h"
#include "verdict/harness_protocol.h"

namespace ptxbench::eval {

struct session_limits {
  double setup_timeout_s = 900;    ///< baseline setup (autotuning, reference outputs)
  double candidate_timeout_s = 0;  ///< one candidate's GPU stages; 0: derived from the GPU options
};

class harness_session {
 public:
  /// Starts the harness for the task on config.gpu.device and waits for it to set the task up. An
  /// error: the harness is missing, could not start, or could not set the task up.
  static result<std::unique_ptr<harness_session>> start(const task& t, const target_info& target,
                                                        const pipeline_config& config, session_limits limits = {});
  ~harness_session();
  harness_session(const harness_session&) = delete;
  harness_session& operator=(const harness_session&) = delete;

  /// Runs the GPU stages for one built candidate and completes its verdict (like run_gpu_stages). An
  /// error means the harness failed (died, hung, or reported an infrastructure failure) or `cancel`
  /// turned true while it worked (the harness is stopped: a candidate cannot be abandoned halfway);
  /// the session is closed afterwards and alive() is false.
  status evaluate(gpu_candidate& candidate, const std::atomic<bool>* cancel = nullptr);

  [[nodiscard]] bool alive() const { return m_pid > 0; }
  [[nodiscard]] const ordered_json& environment() const { return m_environment; }  ///< the harness's
  [[nodiscard]] double setup_seconds() const { return m_setup_s; }
  [[nodiscard]] int candidates() const { return m_candidates; }
  [[nodiscard]] pid_t pid() const { return m_pid; }

 private:
  harness_session() = default;
  void close(const std::string& why, bool graceful);
  std::string log_tail() const;

  const task* m_task = nullptr;
  const target_info* m_target = nullptr;
  harness_job m_job;
  double m_candidate_deadline_s = 0;
  pid_t m_pid = -1;
  int m_to = -1, m_from = -1;
  std::unique_ptr<line_reader> m_reader;
  ordered_json m_environment;
  double m_setup_s = 0;
  int m_candidates = 0;
  std::string m_closed_because;
};

}  // namespace ptxbench::eval
