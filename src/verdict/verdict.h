#pragma once
// The verdict: everything one evaluation of one candidate established, stage by stage. It is the
// contract between the pipeline and the harness (which fill it), the printers (terminal summary,
// feedback text for the model, turn records, the report), the agent's trajectory files and the
// metrics (which read it back from JSON). Nothing here formats text for people.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/trace.h"
#include "verdict/outcome.h"
#include "verdict/stage_record.h"

namespace ptxbench {

/// One reason the source gate or link gate rejected a candidate.
struct gate_finding {
  std::string rule;     ///< e.g. "vendor-library", "dynamic-loading", "process-spawn", "size", "needed-library"
  std::string file;     ///< source path or the shared object
  int line = 0;         ///< 1-based; 0 when not about a line
  std::string excerpt;  ///< the offending text
  std::string message;  ///< one line for a person
};

/// Per-kernel resource use as ptxas reports it.
struct kernel_resources {
  std::string kernel;  ///< mangled name
  std::string arch;
  int registers = 0;
  int barriers = 0;
  int64_t smem_bytes = 0;
  int64_t cmem0_bytes = 0;
  int64_t stack_frame_bytes = 0;
  int64_t spill_store_bytes = 0;
  int64_t spill_load_bytes = 0;
};

struct build_summary {
  bool attempted = false;
  bool succeeded = false;
  bool cache_hit = false;
  std::string cache_key;
  double seconds = 0;
  std::vector<std::string> command;  ///< the nvcc argv
  std::string nvcc_version;
  std::string log;                   ///< the compiler's output, verbatim (what the model reads)
  std::vector<std::string> errors;
  std::vector<std::string> warnings;
  std::vector<kernel_resources> kernels;
  std::string artifact;              ///< path of the built shared object
  std::string artifact_sha256;
};

enum class target_verdict {
  executed,        ///< a required family ran with a predicate-on thread count > 0
  not_executed,    ///< present in SASS, but no required family ran on the workload
  absent_in_sass,  ///< no required family in the built SASS at all
  profile_error,   ///< the runtime count could not be taken; never counts as executed
  deferred,        ///< not established here (no disassembler / no GPU of the target's kind)
};
std::string_view target_verdict_name(target_verdict v);
std::optional<target_verdict> parse_target_verdict(std::string_view name);

using family_counts = std::map<std::string, int64_t>;

/// One executed instruction form of one kernel, summed over the kernel's launches (evidence for
/// work coverage, eval/coverage.h).
struct executed_instruction {
  std::string kernel;           ///< ncu's (demangled) kernel name
  std::string mnemonic;         ///< full mnemonic: "HGMMA.64x128x16.F32.BF16"
  std::string family;           ///< its family (GMMA, TMA, TCGEN05, UBLKCP, UBLKRED)
  int64_t inst_executed = 0;    ///< warp-level executions
  int64_t thread_pred_on = 0;   ///< predicate-on thread executions
};

/// What the runtime check's profile established for work coverage: per-instruction executed counts
/// (ncu's source page) and the TMA byte counters (its details page). The harness collects it; the
/// orchestrator computes the coverage from it and the task's work (eval/coverage.h).
struct coverage_evidence {
  std::vector<executed_instruction> instructions;  ///< families that matter for coverage, count > 0
  std::map<std::string, std::map<std::string, double>> counters;  ///< kernel → metric → value (summed)
  std::string instructions_missing;  ///< why there is no per-instruction data ("" = present)
  std::string counters_missing;      ///< why there are no TMA byte counters ("" = present)
};

/// What the runtime (dynamic) check counted: predicate-on thread instructions per family.
struct runtime_counts {
  std::optional<family_counts> counts;        ///< summed over kernels; nullopt = not profiled
  std::map<std::string, family_counts> per_kernel;
  std::string method;                         ///< "ncu" | "cupti" | ""
  std::string error;                          ///< non-empty: the profile could not be taken (profile_error)
  bool ran = false;                           ///< the check was attempted
  std::optional<coverage_evidence> evidence;  ///< from the same profiled call; nullopt = not collected
};

/// The share of the task's work one required family's executed instructions did (GMMA: FLOPs of
/// the executed GMMA instructions, from their shapes; TMA: bytes its copies moved), over the task's
/// FLOPs or minimum bytes (suite/tasks.json "work"). Computed by eval/coverage.h.
struct family_coverage {
  std::optional<double> fraction;  ///< done / required (may exceed 1: re-reads, masked work); nullopt = unknown
  std::string unit;                ///< "flop" | "byte"
  double done = 0;                 ///< what the family's executed instructions account for
  double required = 0;             ///< the task's FLOPs or minimum bytes
  std::string reason;              ///< one line: how it was computed, or why it is unknown
};

struct target_instructions {
  std::string target;                         ///< "h200"
  std::string arch;                           ///< "sm_90a"
  std::vector<std::string> required_families; ///< any one suffices
  std::optional<family_counts> static_counts; ///< SASS instructions per family, all kernels; nullopt = not disassembled
  std::map<std::string, family_counts> static_per_kernel;
  runtime_counts dynamic;
  target_verdict verdict = target_verdict::deferred;
  std::string reason;                         ///< one line
  std::map<std::string, family_coverage> coverage;  ///< per required family
  std::optional<double> min_coverage;         ///< --min-coverage: target-correct also needs this much
  /// True when a required family's known coverage is at least `x`.
  [[nodiscard]] bool coverage_at_least(double x) const;
};

struct output_error {
  std::string name;
  double max_absolute_error = 0;
  double max_relative_error = 0;
  int64_t mismatches = 0;            ///< elements outside tolerance (NaN/Inf count as mismatches)
  int64_t nonfinite = 0;
  std::vector<int64_t> worst_index;  ///< multi-index of the worst element
  double worst_value = 0, worst_expected = 0;
};

struct correctness_summary {
  std::string rule;                  ///< "allclose" | "upstream_and"
  double atol = 1e-2, rtol = 1e-2;
  int trials = 0;
  std::vector<uint64_t> seeds;       ///< one per trial, replayable
  double max_absolute_error = 0, max_relative_error = 0;
  std::vector<output_error> outputs; ///< the worst trial's per-output statistics
  int failed_trial = -1;             ///< index of the first failing trial, -1 if none
  std::string shape_or_dtype_problem;
};

struct latency_stats {
  double median_ms = 0, p10_ms = 0, p90_ms = 0, mean_ms = 0, cv = 0;
  int samples = 0;
};

/// The physical floor of one task on the device that timed it: no GPU finishes the task faster
/// than its FLOPs at the peak tensor rate, nor than the bytes that must cross DRAM at the peak
/// bandwidth (eval/physical_floor.h computes it).
struct physical_floor {
  double floor_ms = 0;    ///< max(compute_ms, memory_ms)
  double compute_ms = 0;  ///< FLOPs / peak FLOP rate
  double memory_ms = 0;   ///< DRAM bytes / peak bandwidth
  double dram_bytes = 0;  ///< bytes read + bytes written beyond the L2 size
  std::string basis;      ///< one line: "max(6.013e+11 FLOP / 1070.5 TFLOP/s = 0.5617 ms, ...) on h200"
};

struct timing_summary {
  std::string method;       ///< "cupti" | "events"
  int warmup = 0, iterations = 0;
  latency_stats candidate, reference;
  double speedup = 0;       ///< median over pairs of reference_span / candidate_span
  double speedup_p10 = 0, speedup_p90 = 0;
  /// The 95% confidence interval of the median per-pair speedup (distribution-free), its relative
  /// half-width, and why sampling stopped: "converged" (within the target), "time_cap" (the interval
  /// is what the cap allowed), "max_pairs", or "fixed" (--iterations).
  double speedup_ci_low = 0, speedup_ci_high = 0, speedup_ci_half_width = 0;
  double ci_target_half_width = 0;
  int pairs = 0;
  std::string stopped;
  std::string reference_name;  ///< e.g. "cuBLASLt 13.1 algo 3 (autotuned over 8)"
  bool wallclock_disagreed = false;  ///< the candidate span was below the trusted wall-clock bound
  double candidate_wall_median_ms = 0;
  int input_sets = 0;
  double l2_flush_bytes = 0;
  std::vector<double> sm_clock_mhz;  ///< before and after
  std::optional<physical_floor> floor;  ///< every timed call was above it; nullopt = the task or target has no floor
};

/// One stage's hold on the GPU's lease (gpu/harness/device_lease.h).
struct lease_hold {
  std::string stage;       ///< the stage that held it ("timing", "dynamic_check", "sanitize", "correctness")
  bool exclusive = false;  ///< exclusive (a measuring stage) or shared
  double waited_ms = 0;    ///< waiting for the lease
  double held_ms = 0;      ///< holding it
  /// When it was granted, in ms since the Unix epoch: the host's wall clock, comparable across the
  /// processes that share the GPU, so that a run's holds give the GPU's occupancy (bench/service).
  double granted_unix_ms = 0;
};

/// How the GPU stages had the device: each stage that used the GPU held the physical GPU's lease —
/// exclusive while measuring (timing, the dynamic check's profiled call), so that nothing else of
/// PTXBench ran on that GPU meanwhile; shared otherwise. A lease that cannot be had is an
/// infrastructure failure, never a measurement without it.
struct measurement_lease {
  std::string device;      ///< the physical GPU ("GPU-<uuid>"), whatever index a process sees it under
  std::string lease_dir;   ///< where the host's leases live
  std::vector<lease_hold> holds;
  [[nodiscard]] bool exclusive() const;        ///< a measuring stage ran, and every one held the exclusive lease
  [[nodiscard]] double exclusive_waited_ms() const;
  [[nodiscard]] double exclusive_held_ms() const;  ///< the candidate's exclusive GPU time
};

enum class eval_mode { check, eval };
std::string_view mode_name(eval_mode m);

/// How an evaluation ended and why: set once, by the stage (or the infrastructure) that decided.
struct decision {
  eval_outcome outcome = eval_outcome::infra_error;
  std::optional<stage_id> stage;  ///< the deciding stage; nullopt when no stage decided (built, infra)
  std::string message;            ///< one line for a person
  std::string log;                ///< sanitizer/debug text or the candidate's error text, for feedback
};

/// The outcome of `ptxbench check` or `ptxbench eval` for one candidate on one task.
struct verdict {
  eval_mode mode = eval_mode::check;
  std::string task;
  std::string target;
  std::string arch;
  decision decided;
  std::vector<stage_record> stages;
  std::vector<gate_finding> gate_findings;
  build_summary build;
  target_instructions targets;
  std::optional<correctness_summary> correctness;
  std::optional<timing_summary> timing;
  std::optional<measurement_lease> measurement;  ///< how the GPU stages had the device; nullopt = no GPU stage ran
  ordered_json environment;  ///< GPU, driver, CUDA, library versions, clocks (object or null)
  std::optional<trace> flashinfer_trace;

  [[nodiscard]] eval_outcome outcome() const { return decided.outcome; }
  /// FlashInfer's status, derived from the outcome (nullopt for built and infra_error).
  [[nodiscard]] std::optional<eval_status> status() const { return flashinfer_status(decided.outcome); }
  [[nodiscard]] bool passed() const { return decided.outcome == eval_outcome::passed; }
  /// True when every workload passed and a required family was verified as executed (and, with a
  /// targets.min_coverage, did at least that share of the task's work).
  [[nodiscard]] bool target_correct() const;
  [[nodiscard]] const stage_record* stage(stage_id id) const { return find_stage(stages, id); }
};

}  // namespace ptxbench
