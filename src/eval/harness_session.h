#pragma once
// The one way anything reaches the trusted harness: a long-lived harness process for one task
// (`ptxbench-harness --serve-fds`), set up once (baseline, buffers, input generator) and then given
// candidates one at a time. `ptxbench eval`, the agent's evaluator and the service's GPU workers all
// drive it (through eval/session_pool.h), for CUDA and Triton candidates alike. Each candidate still
// runs in fresh, sandboxed runner processes that the harness starts; what stays alive is only the
// trusted side.
//
// A session is one child process and two pipes. A harness that dies, hangs past the candidate's
// deadline or reports an infrastructure failure ends the session with an error (the caller starts a
// new one); an infrastructure failure is never a verdict. The candidate's own failures are verdicts
// and leave the session running.

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>

#include "build/build_stage.h"
#include "core/json_check.h"
#include "core/line_channel.h"
#include "core/result.h"
#include "eval/harness_job.h"
#include "eval/pipeline.h"
#include "verdict/harness_protocol.h"

namespace ptxbench::eval {

/// One built candidate on its way to the GPU stages.
struct gpu_candidate {
  const build::build_result* built = nullptr;  ///< its shared object (CUDA) or stored kernel.py (Triton)
  std::string symbol = "run";
  verdict* v = nullptr;            ///< completed in place (its CPU stages are already there)
  std::string language = "cuda";   ///< "cuda" | "triton"
};

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

  /// Runs the GPU stages for one built candidate and completes its verdict: the harness's stages,
  /// decision and measurement record, for a Triton candidate the static SASS of the kernels it
  /// compiled, and the target verdict. An error means the harness failed (died, hung, or reported an
  /// infrastructure failure) or `cancel` turned true while it worked (the harness is stopped: a
  /// candidate cannot be abandoned halfway); the session is closed afterwards and alive() is false.
  /// A Triton candidate on a host without the Triton runtime is an error that leaves the session open.
  status evaluate(gpu_candidate& candidate, const std::atomic<bool>* cancel = nullptr);

  /// Ends the session and waits (up to 3 s) for the harness to exit, whatever await_harness_exit
  /// says: for a caller that goes on using the GPU (a pool making room for another task's harness),
  /// so the old harness's teardown does not overlap what comes next.
  void retire() { close("session retired", true, true); }

  [[nodiscard]] bool alive() const { return m_pid > 0; }
  [[nodiscard]] const ordered_json& environment() const { return m_environment; }  ///< the harness's
  [[nodiscard]] double setup_seconds() const { return m_setup_s; }
  [[nodiscard]] int candidates() const { return m_candidates; }
  [[nodiscard]] pid_t pid() const { return m_pid; }

 private:
  harness_session() = default;
  void close(const std::string& why, bool graceful, bool await_exit = true);
  std::string log_tail() const;
  /// Adds what the harness established for a candidate to its verdict (see evaluate).
  status complete(const gpu_stage_result& r, gpu_candidate& c) const;

  const task* m_task = nullptr;
  const target_info* m_target = nullptr;
  harness_job m_job;
  std::string m_triton_missing;  ///< why this host cannot run Triton candidates ("" when it can)
  double m_candidate_deadline_s = 0;
  pid_t m_pid = -1;
  int m_to = -1, m_from = -1;
  std::unique_ptr<line_reader> m_reader;
  ordered_json m_environment;
  double m_setup_s = 0;
  bool m_await_exit = true;  ///< pipeline_config::await_harness_exit
  int m_candidates = 0;
  std::string m_closed_because;
};

}  // namespace ptxbench::eval
