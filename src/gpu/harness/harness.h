#pragma once
// The trusted harness: owns every buffer (inputs, candidate-visible outputs with guard regions,
// reference outputs), runs the vendor baseline, poisons and flushes, compares and decides. Candidate
// code only ever runs in a runner process (runner_client) that sees the current call's buffers.

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/process.h"
#include "core/result.h"
#include "verdict/harness_protocol.h"
#include "verdict/stage_record.h"
#include "gpu/common/activity_tracer.h"
#include "baselines/baseline.h"
#include "gpu/harness/call_failure.h"
#include "gpu/harness/device_lease.h"
#include "gpu/harness/device_checks.h"
#include "gpu/harness/device_ops.h"
#include "gpu/harness/guarded_buffer.h"
#include "gpu/harness/input_generator.h"
#include "gpu/harness/runner_client.h"
#include "gpu/harness/stage_order.h"
#include "verdict/stage_timer.h"

namespace ptxbench::gpu {

/// A plain harness-private allocation (reference outputs are never shared).
struct device_allocation {
  void* data = nullptr;
  std::size_t bytes = 0;
  explicit device_allocation(std::size_t n);
  ~device_allocation();
  device_allocation(const device_allocation&) = delete;
  device_allocation& operator=(const device_allocation&) = delete;
};

/// One call's buffers: the candidate-visible inputs and outputs, and the reference's own outputs.
struct tensor_set {
  std::vector<std::unique_ptr<guarded_buffer>> inputs, outputs;
  /// Where the reference writes its outputs for this set's inputs, one per output. Per set, not one
  /// for all: the reference's buffers rotate through as many placements as the candidate's, so that
  /// neither side's time depends on where a single buffer happened to land.
  std::vector<std::unique_ptr<device_allocation>> reference_outputs;
  /// Per input: a scalar's bytes (scalar_input.h), sent with its description; empty for tensors.
  std::vector<std::vector<unsigned char>> scalar_values;

  [[nodiscard]] std::vector<guarded_buffer*> input_ptrs() const;
  [[nodiscard]] std::vector<ipc_tensor> describe() const;  ///< inputs then outputs
  [[nodiscard]] std::vector<device_tensor> input_views() const;
  [[nodiscard]] std::size_t bytes() const;  ///< what the set holds on the GPU: inputs, outputs, reference outputs
};

/// The dynamic check's Nsight Compute run, taken before the timing stage: ncu's writing of its report
/// (once the runner process has ended) and its reading back (`ncu --import`), both CPU only, run while
/// timing measures, and the profile is judged after it (stage_dynamic.cc), so neither adds to the wall
/// clock.
struct dynamic_profile {
  /// The stage's record when it ended without a report to read (skipped, profile_error).
  std::optional<stage_record> settled;
  std::filesystem::path ncu, report;
  std::string coverage_missing, runner_log;
  ordered_json details = ordered_json::object();
  int per_call = -1;                 ///< launches profiled: one call's worth, or every launch (-1)
  int profiled = -1;                 ///< which of the profiled calls (-1: all)
  double seconds = 0;                ///< spent before the timing stage
  /// How Nsight Compute ended once it wrote its report, and its output (the runner's log). When the
  /// runner could be released (runner_client::release: the runner process itself had ended), ncu's
  /// remaining work — writing the report, CPU only — is awaited on another thread while the timing
  /// stage measures (`overlapped`); else it was awaited before timing, as always.
  struct ncu_end {
    std::string how, log;
    double seconds = 0;              ///< from the runner's end (or the shutdown) to ncu's
    bool overlapped = false;
  };
  std::shared_future<ncu_end> ncu_done;
  /// The imports; each starts once ncu_done is ready (the report is written).
  std::future<process_result> details_page, source_page;
  /// The runner under Nsight Compute started speculatively (dynamic_prestart) while sanitize may
  /// still run: forked on the harness's thread, its start-up awaited on another; its shared lease's
  /// hold is recorded in `start_holds` (merged into the result only once it is judged or abandoned).
  std::unique_ptr<runner_client> runner;
  runner_launch launch;
  std::future<result<call_result>> starting;
  measurement_lease start_holds;
  double start_seconds = 0;          ///< the speculative start-up, from the fork to the runner frozen
  dynamic_profile() = default;
  dynamic_profile(const dynamic_profile&) = delete;
  dynamic_profile& operator=(const dynamic_profile&) = delete;
  ~dynamic_profile();
};

/// The sanitize stage while it runs beside the runner's start-up and correctness (stage_sanitize.cc):
/// its first tool's runner is forked on the harness's thread and driven on another; any further tool
/// runs on the harness's thread when the stage is awaited. Its record, lease hold, sandbox reports
/// and decision collect in `part`, judged before correctness's (stage_order.h).
struct sanitize_run {
  stage_part part;
  std::optional<stage_timer> timer;
  std::optional<stage_lease> shared;       ///< the stage's shared lease, released when it ends
  std::filesystem::path tool;              ///< compute-sanitizer
  std::vector<std::string> tools;          ///< still to run, in order
  std::vector<ipc_tensor> tensors;         ///< its input set's description, taken on the harness's thread
  ordered_json details = ordered_json::array();
  bool ended = false;                      ///< the record is in `part` (and part.go_on says whether it decided)
  std::unique_ptr<runner_client> runner;   ///< the first tool's runner
  std::future<void> first;                 ///< that tool, awaited and judged on another thread
  /// Set when sanitize decided the verdict or could not run: the correctness runner is stopped then
  /// (its calls end at once; nothing of correctness reaches the verdict).
  std::atomic<bool> stop_correctness{false};
  std::atomic<runner_client*> correctness_runner{nullptr};
  void cancel_correctness();
  sanitize_run() = default;
  sanitize_run(const sanitize_run&) = delete;
  sanitize_run& operator=(const sanitize_run&) = delete;
  ~sanitize_run();
};

class harness {
 public:
  /// Sets up the device, the baseline (plans, autotuning), the input generator and the first buffer
  /// set, holding the GPU's shared lease. An error means the task cannot be evaluated here (no GPU,
  /// unsupported library, no lease...).
  static result<std::unique_ptr<harness>> create(const harness_job& job);
  ~harness();

  /// Runs the GPU stages for one candidate. The candidate's own failures (crash, hang, wrong
  /// results, sandbox violations) are its result; an error is infrastructure — the harness itself
  /// failed, or the GPU's lease could not be had — and never a verdict. Never throws.
  result<gpu_stage_result> evaluate(const job_candidate& candidate);

  [[nodiscard]] const ordered_json& environment() const { return m_environment; }
  [[nodiscard]] std::string baseline_description() const;

 private:
  explicit harness(const harness_job& job) : m_job(job) {}

  // Stages (stage_*.cc). Each appends its record to out.stages and returns false when it decided
  // the verdict (out.decided is then set).
  /// Triton: capture, plan, provenance (stage_triton_plan.cc). On success `replay` is the candidate
  /// as the C++ runner replays it (language "plan").
  bool stage_triton_plan(const job_candidate& c, gpu_stage_result& out, job_candidate& replay);
  /// Sanitize in two halves around correctness: sanitize_begin (on the harness's thread: the lease,
  /// its input set written, the first tool's runner forked and then driven on another thread) and
  /// sanitize_end (awaits it, runs any further tool, returns the stage's part to be judged).
  void sanitize_begin(const job_candidate& c, sanitize_run& s);
  stage_part sanitize_end(const job_candidate& c, sanitize_run& s);
  /// One tool's run and judgement; returns false when the stage ended (decided or tool error).
  bool sanitize_tool(const std::string& tool, runner_client& runner, const runner_launch& l, sanitize_run& s);
  runner_launch sanitize_launch(const job_candidate& c, const std::string& tool, const std::filesystem::path& path) const;
  /// The runner's start-up and correctness, into their own part (judged after sanitize's).
  stage_part correctness_part(const job_candidate& c, runner_client& runner, sanitize_run& s);
  bool stage_correctness(const job_candidate& c, runner_client& runner, gpu_stage_result& out);
  bool stage_timing(runner_client& runner, gpu_stage_result& out);
  /// The dynamic check's first half, before timing: the profiled calls under Nsight Compute, and the
  /// report's import started. Returns false only when the profiled run decided the verdict (a sandbox
  /// violation); the stage's record is appended by stage_dynamic_finish, after timing's.
  bool stage_dynamic_profile(const job_candidate& c, gpu_stage_result& out, dynamic_profile& p);
  /// While sanitize and correctness may still run: when the dynamic check will profile, chooses the
  /// profiled call of `per_call` launches and starts the runner under Nsight Compute (its shared
  /// lease, its start-up on another thread). stage_dynamic_profile takes it over; dynamic_abandon
  /// stops it. `per_call` is correctness's count, or before correctness dynamic_early_guess's.
  void dynamic_prestart(const job_candidate& c, dynamic_profile& p, int per_call);
  /// The launches per call to start the dynamic check's runner with before correctness has counted
  /// them (0: wait for the count). The runner is started again when the count differs.
  [[nodiscard]] int dynamic_early_guess(const job_candidate& c) const;
  /// A speculative start that an earlier stage's decision made pointless: stopped, only its hold kept.
  static void dynamic_abandon(gpu_stage_result& out, dynamic_profile& p);
  /// Whether the dynamic check profiles this candidate at all (else stage_dynamic_profile settles it).
  [[nodiscard]] bool dynamic_will_profile(const job_candidate& c) const;
  /// Draws the profiled call (known to the harness and ncu only) from correctness's launches per call.
  void dynamic_choose(dynamic_profile& p, int per_call);
  runner_launch dynamic_launch(const job_candidate& c, const dynamic_profile& p, bool with_coverage) const;
  /// The second half, after timing: the imported report judged, the stage's record appended.
  void stage_dynamic_finish(const job_candidate& c, gpu_stage_result& out, dynamic_profile& p);
  /// Whether a kernel the profiler names is one of the candidate's own (job_candidate::kernels).
  static bool candidate_kernel(const job_candidate& c, const std::string& profiled_name);

  // Shared steps.
  /// This GPU's lease for one stage (gpu/harness/device_lease.h): exclusive for a measuring stage,
  /// shared otherwise; recorded in `record`. Throws when it cannot be had (infrastructure).
  stage_lease lease(const std::string& stage, bool measuring, measurement_lease& record) const;
  tensor_set make_set() const;
  void ensure_sets(std::size_t n);
  double run_reference(tensor_set& set, bool timed);  ///< returns the GPU span in ms when timed
  /// The last timed reference run's records and busy time (CUPTI only; recorded, not used: whether a
  /// reference's span holds idle gaps between its launches).
  int m_reference_records = 0;
  double m_reference_busy_ms = 0;
  int m_reference_records_seen = 0;  ///< the most records one timed reference run has made
  /// Checks a finished call's side effects: vendor mappings, guards, unchanged inputs (one batch of
  /// device checks). Returns a one-line problem or "".
  std::string check_call_hygiene(runner_client& runner, tensor_set& set, const std::vector<uint64_t>& input_sums);
  /// What a call starts from: every guard armed, the outputs poisoned, the inputs' checksums taken
  /// (returned), and with `flush_l2` the L2 flushed last; one synchronisation.
  std::vector<uint64_t> prepare_call(tensor_set& set, bool flush_l2);
  /// The same without checksums (calls whose inputs are not checked afterwards).
  void prepare_outputs(tensor_set& set);
  /// Enqueues the guards' arming and the outputs' poison.
  void arm_and_poison(tensor_set& set);
  /// Compares each output of `set` (or, with `from`, those copies of them) with the reference's
  /// outputs, in one batch.
  std::vector<compare_stats> compare_outputs(const tensor_set& set, const std::vector<const void*>& from, double atol,
                                             double rtol);
  runner_launch launch_for(const job_candidate& c, const std::string& mode, bool timing) const;
  /// The launch audit's judgement of a successful call (eval/measurement_audit.h): "measurement
  /// tampered: ..." or "" when the call's measurement is intact or not audited.
  static std::string tampering(const runner_client& runner, const call_result& r);
  /// Copies the set's outputs into m_snapshot on the harness's stream and waits: the harness's own
  /// confirmation, inside the timed interval, that the work behind the runner's "done" has ended
  /// (docs/trusted-timing.md). Timed outputs are compared from the snapshot.
  void snapshot_outputs(tensor_set& set);
  std::string work_dir_for(const std::string& what) const;

  const harness_job& m_job;
  int m_device = 0;
  std::string m_lease_device;          // the GPU's UUID: one lease per physical GPU
  std::filesystem::path m_lease_dir;
  cudaStream_t m_stream = nullptr;
  std::map<std::string, int64_t> m_axes;
  std::unique_ptr<activity_tracer> m_tracer;
  std::unique_ptr<l2_flusher> m_flusher;
  /// The batch every call's device checks go through (on m_stream; the harness's CUDA work is all on
  /// one thread).
  std::unique_ptr<device_checks> m_checks;
  std::unique_ptr<baseline> m_reference;
  std::unique_ptr<input_generator> m_inputs;
  std::vector<tensor_set> m_sets;
  std::vector<std::unique_ptr<device_allocation>> m_snapshot;  // see snapshot_outputs
  static constexpr int k_snapshot_chunks_per_output = 16;
  std::mt19937_64 m_snapshot_rng{std::random_device{}()};  // the snapshot's order, unknowable to the runner
  compare_rule m_rule = compare_rule::allclose;
  ordered_json m_environment;
  int m_candidate_index = 0;
  /// Kernel launches of each correctness call of the current candidate when all were the same number
  /// (the dynamic check profiles one call's worth); -1 when they varied or are unknown.
  int m_launches_per_call = -1;
  /// The same for the timed calls: the profiled call must have done what they did.
  int m_timed_launches_per_call = -1;
};

}  // namespace ptxbench::gpu
