#pragma once
// The harness's handle on one candidate runner process: starts it (directly, or under
// compute-sanitizer or Nsight Compute), talks to it over the private socket, enforces deadlines,
// freezes it while the reference runs, inspects its memory map, and turns every way it can die
// (crash, exit(), trap, hang) into a typed outcome instead of an exception.

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/message_channel.h"
#include "core/sync_channel.h"
#include "core/result.h"
#include "gpu/common/ipc_tensor.h"

namespace ptxbench::gpu {

struct runner_launch {
  std::filesystem::path runner;              ///< the ptxbench-runner executable (or the script `interpreter` runs)
  std::vector<std::string> wrapper;          ///< e.g. {"compute-sanitizer", "--tool", "memcheck", ...}; empty: direct
  /// For a runner that is a script: the interpreter and its options before it ({"python3", "-I",
  /// "-B"} for the Triton runner); empty: `runner` is an executable. Same socket, same protocol.
  std::vector<std::string> interpreter;
  std::filesystem::path work_dir;            ///< logs and the socket live here
  std::filesystem::path shared_object;       ///< the candidate
  std::string symbol = "run";
  std::string mode = "plain";                ///< "plain" (IPC buffers) | "private" (exact-size copies)
  bool timing = false;                       ///< CUPTI spans in the runner
  int device = 0;
  double startup_timeout_s = 120;
  bool sandbox = true;                       ///< confine the runner (docs/sandbox.md); false only for diagnosis
  /// Added to the deadline of the first (non-noop) call's "prepare": a Triton runner runs its
  /// warm-up there, which JIT-compiles the candidate's kernels (never in a timed call).
  double first_prepare_extra_s = 0;
  /// Extra fields of the "setup" message for this kind of runner (the Triton runner's helper
  /// library, its profiling window); the C++ runner ignores fields it does not know.
  ordered_json setup_extra = ordered_json::object();
  /// go/done on a shared page (core/sync_channel.h) instead of the socket, where possible: only
  /// without a wrapper tool (the page is an inherited descriptor), and only if the runner maps it.
  bool shared_memory_sync = true;
  /// Runs after the runner's "hello" and before its "setup": the runner has started (its interpreter
  /// and libraries are loaded) but has touched no GPU and holds no candidate code. The Triton capture
  /// takes the GPU's lease here, so the lease does not cover Python's start-up. An exception ends
  /// start() (the runner is stopped with this client).
  std::function<void()> before_setup;
};

enum class call_outcome {
  ok,         ///< the call returned and the GPU work finished without error
  failed,     ///< the candidate reported an error or a CUDA error happened (runner says so)
  crashed,    ///< the runner process died (signal, exit(), abort)
  timed_out,  ///< no answer within the deadline; the process was killed
};

/// Why the candidate's own entry point refused a call (kernel ABI version 2's error kinds; a
/// version-1 candidate reports none: unspecified). `compile`: the Triton runner's warm-up, where
/// Triton JIT-compiles the candidate's kernels, failed in Triton's compiler (or ptxas).
/// `unreplayable`: a Triton capture whose graph holds a launch the launch plan cannot replay.
enum class candidate_error { unspecified, argument_count, dtype, shape, exception, compile, unreplayable };

/// Reads the runner's name for an error kind ("dtype"); anything unknown is unspecified.
candidate_error parse_candidate_error(std::string_view name);

struct call_result {
  call_outcome outcome = call_outcome::failed;
  std::string message;            ///< one line for failed/crashed/timed_out
  std::string method;             ///< "cupti" | "none"
  double span_ms = 0;             ///< GPU span the runner measured (untrusted)
  int records = 0;
  /// Harness clock from "go" to the end of the call as the harness established it: the runner's
  /// "done", then the harness's own confirmation (call()'s on_done, e.g. a snapshot of the outputs
  /// on its own stream). Trusted.
  double wall_ms = 0;
  double signal_ms = 0;           ///< harness clock from "go" to the runner's "done" alone (part of wall_ms)
  double lead_ms = 0;             ///< harness clock from resuming the runner to its "prepared" (recorded only)
  ordered_json audit;             ///< the runner's launch audit of the call (eval/measurement_audit.h); null if none
  std::vector<std::string> kernels;
  candidate_error error_kind = candidate_error::unspecified;  ///< for failed: what the entry point said
  bool load_error = false;        ///< the candidate could not be loaded (missing export, bad ABI, unresolved symbol)
  ordered_json sandbox;           ///< start(): the runner's sandbox report (for the verdict's environment)
  std::string sandbox_violation;  ///< crashed: the sandbox's message ("sandbox: attempted execve"); "" when not the sandbox
};

class runner_client {
 public:
  runner_client() = default;
  ~runner_client();
  runner_client(const runner_client&) = delete;
  runner_client& operator=(const runner_client&) = delete;

  /// Starts the runner and loads the candidate. A candidate that cannot be loaded (missing export,
  /// wrong ABI, unresolved symbol) or a runner that dies during start-up is returned as a
  /// call_result with outcome failed/crashed; an error means the harness could not even try.
  result<call_result> start(const runner_launch& launch);
  /// start() in two steps: spawn() forks the runner — on a thread that outlives it, the harness's
  /// own (a child dies with the thread that forked it: PR_SET_PDEATHSIG) — and finish_start()
  /// awaits its hello and loads the candidate; finish_start() and everything after it may run on
  /// another thread (only one thread at a time uses a client).
  status spawn(const runner_launch& launch);
  result<call_result> finish_start(const runner_launch& launch);

  /// Kills the runner's process group (SIGKILL) from any thread, e.g. while another thread waits in
  /// finish_start() or call(): that wait then ends as a crash. A no-op before spawn() and once the
  /// process has been reaped (so a reused process group is never hit). The owner still calls stop().
  void abort();

  /// One call: share the tensors, then "go" and wait for "done" within timeout_s. noop=true times
  /// the round trip without calling the candidate (the calibration of the wall-clock bound).
  /// on_done runs right after the runner's "done" and inside the timed interval: the harness's own
  /// confirmation that the work ended (docs/trusted-timing.md). on_prepared runs after the runner
  /// said "prepared" and before "go", outside the timed interval: the harness writes the call's
  /// inputs there, so no thread of the candidate's can start the work before "go".
  call_result call(const std::vector<ipc_tensor>& tensors, double timeout_s, bool noop = false,
                   const std::function<void()>& on_done = {}, const std::function<void()>& on_prepared = {});

  /// "shared_memory" when go/done travel on the shared page, else "socket".
  [[nodiscard]] std::string channel() const { return m_sync_active ? "shared_memory" : "socket"; }
  /// Whether the runner audits its calls' launches (CUPTI callbacks and activity records both on);
  /// audit_unavailable() says why not.
  [[nodiscard]] bool audits() const { return m_audits; }
  [[nodiscard]] const std::string& audit_unavailable() const { return m_audit_error; }

  /// Stops the runner's process (SIGSTOP) while the harness runs the reference, so no thread the
  /// candidate left behind can launch work into the reference's timing; thaw() resumes it.
  void freeze();
  void thaw();

  /// Names of vendor libraries (cuBLAS, cuBLASLt, cuDNN) mapped into the runner, read from
  /// /proc/<pid>/maps (the kernel's view, which the candidate cannot forge), less those already
  /// mapped when the runner said hello, before any candidate code existed in it: the C++ runner
  /// links none, while the Triton runner's `import torch` maps cuBLAS (docs/gpu-evaluation.md).
  [[nodiscard]] std::vector<std::string> vendor_mappings() const;

  /// The runner's only writable folder (its TMPDIR; the Triton runner's kernel cache lives here).
  /// Removed by stop().
  [[nodiscard]] const std::filesystem::path& scratch() const { return m_scratch; }

  /// Asks the runner to exit, then kills whatever is left. Returns how the child ended.
  std::string stop(double grace_s = 10);

  /// stop() in two steps, for a runner under a wrapper tool that still works once the runner has
  /// exited (Nsight Compute writes its report then): release() asks the runner to exit and returns
  /// true as soon as the runner process itself — the one that said hello, followed by a pidfd taken
  /// when it connected — has ended, all its threads, while the tool may still run. stop() then waits
  /// for the tool as always, and may do so on another thread (it only waits; nothing is forked).
  /// False when that could not be established: the runner never connected, the tool was already
  /// reaped, this kernel gives no pidfd (before Linux 5.3, or a seccomp filter), or the runner did not
  /// exit within grace_s — then its process group has been killed, as stop() would have after its
  /// grace. The caller calls stop() in either case. Only the runner is followed: a process it forked would not be (the sandbox
  /// forbids the candidate any; without the sandbox, use stop()).
  bool release(double grace_s);

  /// The runner's stdout+stderr so far (the candidate's prints and the wrapper tool's output),
  /// capped to max_bytes (head and tail).
  [[nodiscard]] std::string output(std::size_t max_bytes = 64u << 10) const;
  [[nodiscard]] bool alive() const { return m_child > 0 && !m_exited; }

 private:
  std::string describe_death();
  call_result lost(const std::string& during, double timeout_s, bool timed_out);
  /// The next message of this call: `type` with this nonce, or any "error". Messages of other calls
  /// (stale, or forged by the candidate for another nonce) are skipped.
  message_channel::received receive_for(int64_t nonce, const std::string& type, double timeout_s);

  pid_t m_child = -1;       // what we spawned (the runner, or the wrapper tool)
  std::atomic<pid_t> m_group{-1};  // its process group while it is not reaped (abort())
  std::atomic<bool> m_aborted{false};
  std::string m_token;              // the runner's proof of identity in its hello
  pid_t m_runner_pid = -1;  // the runner itself (from SO_PEERCRED)
  int m_runner_pidfd = -1;  // a pidfd on it, taken when it connected (release()); -1 when none
  bool m_shutdown_sent = false;  // release() asked it to exit
  void close_runner_pidfd();
  bool m_exited = false;
  int m_status = 0;
  bool m_frozen = false;
  int64_t m_nonce = 0;
  message_channel m_channel;
  message_listener m_listener;
  sync_channel m_sync;        // the shared go/done page; invalid when not used
  bool m_sync_active = false;  // the runner mapped it
  bool m_audits = false;
  std::string m_audit_error;
  std::filesystem::path m_log;
  std::filesystem::path m_scratch;  // the runner's only writable folder; removed by stop()
  std::vector<std::string> m_vendor_baseline;  // vendor libraries mapped before any candidate code
  double m_first_prepare_extra_s = 0;
  int m_calls = 0;                  // non-noop calls prepared so far
};

}  // namespace ptxbench::gpu
