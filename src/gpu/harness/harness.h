#pragma once
// The trusted harness: owns every buffer (inputs, candidate-visible outputs with guard regions,
// reference outputs), runs the vendor baseline, poisons and flushes, compares and decides. Candidate
// code only ever runs in a runner process (runner_client) that sees the current call's buffers.

#include <cuda_runtime.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/result.h"
#include "verdict/harness_protocol.h"
#include "gpu/common/activity_tracer.h"
#include "baselines/baseline.h"
#include "gpu/harness/call_failure.h"
#include "gpu/harness/device_ops.h"
#include "gpu/harness/guarded_buffer.h"
#include "gpu/harness/input_generator.h"
#include "gpu/harness/runner_client.h"

namespace ptxbench::gpu {

/// One set of candidate-visible buffers: the inputs and outputs of one call.
struct tensor_set {
  std::vector<std::unique_ptr<guarded_buffer>> inputs, outputs;
  /// Per input: a scalar's bytes (scalar_input.h), sent with its description; empty for tensors.
  std::vector<std::vector<unsigned char>> scalar_values;

  [[nodiscard]] std::vector<guarded_buffer*> input_ptrs() const;
  [[nodiscard]] std::vector<ipc_tensor> describe() const;  ///< inputs then outputs
  [[nodiscard]] std::vector<device_tensor> input_views() const;
  [[nodiscard]] std::vector<device_tensor> output_views() const;
  [[nodiscard]] std::size_t bytes() const;
};

/// A plain harness-private allocation (reference outputs are never shared).
struct device_allocation {
  void* data = nullptr;
  std::size_t bytes = 0;
  explicit device_allocation(std::size_t n);
  ~device_allocation();
  device_allocation(const device_allocation&) = delete;
  device_allocation& operator=(const device_allocation&) = delete;
};

class harness {
 public:
  /// Sets up the device, the baseline (plans, autotuning), the input generator and the first buffer
  /// set. An error means the task cannot be evaluated here (no GPU, unsupported library...).
  static result<std::unique_ptr<harness>> create(const harness_job& job);
  ~harness();

  /// Runs the GPU stages for one candidate. Never throws: infrastructure failures inside become an
  /// outcome "infra_error" for that candidate, so the next candidate still runs.
  gpu_stage_result evaluate(const job_candidate& candidate);

  [[nodiscard]] const ordered_json& environment() const { return m_environment; }
  [[nodiscard]] std::string baseline_description() const;

 private:
  explicit harness(const harness_job& job) : m_job(job) {}

  // Stages (stage_*.cc). Each appends its record to out.stages and returns false when it decided
  // the verdict (out.decided is then set).
  bool stage_sanitize(const job_candidate& c, gpu_stage_result& out);
  bool stage_correctness(const job_candidate& c, runner_client& runner, gpu_stage_result& out);
  bool stage_timing(runner_client& runner, gpu_stage_result& out);
  bool stage_dynamic(const job_candidate& c, gpu_stage_result& out);

  // Shared steps.
  tensor_set make_set() const;
  void ensure_sets(std::size_t n);
  double run_reference(tensor_set& set, bool timed);  ///< returns the GPU span in ms when timed
  /// Checks a finished call's side effects: vendor mappings, guards, unchanged inputs. Returns a
  /// one-line problem or "".
  /// For a Triton candidate also the kernel provenance of the call (gpu/harness/kernel_provenance.h).
  std::string check_call_hygiene(runner_client& runner, tensor_set& set, const std::vector<uint64_t>& input_sums,
                                 const call_result& call);
  /// Triton: copies the cubins and metadata the candidate's runner compiled out of its scratch
  /// (before stop() removes it) into the work folder, and records them in out.
  void keep_jit_kernels(runner_client& runner, gpu_stage_result& out);
  std::vector<uint64_t> input_checksums(tensor_set& set);
  void prepare_outputs(tensor_set& set);
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
  cudaStream_t m_stream = nullptr;
  std::map<std::string, int64_t> m_axes;
  std::unique_ptr<activity_tracer> m_tracer;
  std::unique_ptr<l2_flusher> m_flusher;
  std::unique_ptr<baseline> m_reference;
  std::unique_ptr<input_generator> m_inputs;
  std::vector<tensor_set> m_sets;
  std::vector<std::unique_ptr<device_allocation>> m_reference_out;
  std::vector<std::unique_ptr<device_allocation>> m_snapshot;  // see snapshot_outputs
  static constexpr int k_snapshot_chunks_per_output = 16;
  std::mt19937_64 m_snapshot_rng{std::random_device{}()};  // the snapshot's order, unknowable to the runner
  compare_rule m_rule = compare_rule::allclose;
  ordered_json m_environment;
  int m_candidate_index = 0;
  bool m_triton = false;             // the candidate being evaluated is a Triton one
  std::string m_provenance_note;     // why kernel provenance could not be checked, if it could not
};

}  // namespace ptxbench::gpu
