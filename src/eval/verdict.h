#pragma once
// The verdict: everything one evaluation of one candidate established, stage by stage. It is the
// contract between the pipeline (which fills it), the CLI printers, the agent's feedback and
// trajectory files, and the metrics (which read it back from JSON). Nothing here formats text.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"
#include "suite/trace.h"

namespace ptxbench::eval {

/// Pipeline stages, in order. The same names are used in code, JSON, logs and docs.
enum class stage_id { source_gate, build, link_gate, static_sass, sanitize, correctness, timing, dynamic_check };
std::string_view stage_name(stage_id s);
std::optional<stage_id> parse_stage(std::string_view name);

enum class stage_outcome {
  passed,    ///< the stage ran and the candidate passed it
  failed,    ///< the stage ran and the candidate failed it (the verdict's deciding stage)
  skipped,   ///< not run because an earlier stage failed, or not requested
  deferred,  ///< could not run here (tool or GPU missing); says where it would run
  error,     ///< the stage itself broke (infrastructure), nothing is known about the candidate
};
std::string_view outcome_name(stage_outcome o);
std::optional<stage_outcome> parse_outcome(std::string_view name);

struct stage_record {
  stage_id id = stage_id::source_gate;
  stage_outcome outcome = stage_outcome::skipped;
  double seconds = 0;
  std::string summary;    ///< one line: why it passed or failed ("no GMMA/TMA in kernel gemm_kernel")
  ordered_json details;   ///< stage-specific data (object or null)
};

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
  std::optional<family_counts> dynamic_counts;  ///< predicate-on thread instructions per family; nullopt = not profiled
  std::map<std::string, family_counts> dynamic_per_kernel;
  std::string dynamic_method;                   ///< "ncu" | "cupti" | ""
  target_verdict verdict = target_verdict::deferred;
  std::string reason;                           ///< one line
  std::map<std::string, family_coverage> coverage;  ///< per required family
  std::optional<double> min_coverage;           ///< --min-coverage: target-correct also needs this much
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

struct timing_summary {
  std::string method;       ///< "cupti" | "events"
  int warmup = 0, iterations = 0;
  latency_stats candidate, reference;
  double speedup = 0;       ///< median over pairs of reference_span / candidate_span
  double speedup_p10 = 0, speedup_p90 = 0;
  std::string reference_name;  ///< e.g. "cuBLASLt 13.1 algo 3 (autotuned over 8)"
  bool wallclock_disagreed = false;  ///< the candidate span was below the trusted wall-clock bound
  double candidate_wall_median_ms = 0;
  int input_sets = 0;
  double l2_flush_bytes = 0;
  std::vector<double> sm_clock_mhz;  ///< before and after
};

/// The outcome of `ptxbench check` or `ptxbench eval` for one candidate on one task.
struct verdict {
  std::string mode;          ///< "check" | "eval"
  std::string task;
  std::string target;
  std::string arch;
  std::optional<eval_status> status;  ///< the FlashInfer status, when one was decided
  std::string outcome;       ///< one word: passed | built | rejected | compile_error | runtime_error |
                             ///< incorrect_shape | incorrect_dtype | incorrect_numerical | timeout | infra_error
  std::string deciding_stage;
  std::string message;       ///< one line for a person
  std::vector<stage_record> stages;
  std::vector<gate_finding> gate_findings;
  build_summary build;
  target_instructions targets;
  std::optional<correctness_summary> correctness;
  std::optional<timing_summary> timing;
  std::string log;           ///< sanitizer/debug text or the candidate's error text, for feedback
  ordered_json environment;  ///< GPU, driver, CUDA, library versions, clocks (object or null)
  std::optional<trace> flashinfer_trace;

  /// True when every workload status is PASSED and a required family was verified as executed
  /// (and, with a min_coverage, did at least that share of the task's work).
  [[nodiscard]] bool target_correct() const;
  [[nodiscard]] bool passed() const { return status && *status == eval_status::PASSED; }
  [[nodiscard]] const stage_record* stage(stage_id id) const;
};

ordered_json to_json(const verdict& v);
result<verdict> verdict_from_json(const ordered_json& j);

}  // namespace ptxbench::eval
