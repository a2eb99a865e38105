#pragma once
// Settings of the GPU stages, shared by the orchestrator (which passes them in the harness job) and
// the harness (which applies them). Defaults are the paper's protocol.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench {

/// The compute-sanitizer tools a request may name (`--sanitizer-tools`, a service's
/// `sanitizer_types`), memcheck first: the default.
inline const std::vector<std::string>& sanitizer_tool_names() {
  static const std::vector<std::string> names = {"memcheck", "racecheck", "synccheck", "initcheck"};
  return names;
}

struct gpu_options {
  std::filesystem::path harness;        ///< ptxbench-harness executable (default: beside ptxbench)
  int device = 0;
  int warmup = 10;                      ///< untimed calls before timing
  /// Timed (reference, candidate) pairs: 0 = adaptive (sample until the median speedup's 95%
  /// interval is within ±timing_ci of it, at least min_pairs, at most timing_cap_s of sampling);
  /// N > 0 = exactly N pairs (the fixed protocol).
  int iterations = 0;
  int min_pairs = 20;
  double timing_ci = 0.0025;            ///< target relative half-width of the speedup's interval
  double timing_cap_s = 1.5;            ///< seconds of sampling before the stage settles for the interval it has
  int input_sets = 0;                   ///< rotating input sets; 0 = the harness decides (gpu/harness/input_set_count.h)
  std::string rule = "allclose";        ///< "allclose" (|d| <= atol + rtol*|ref|) or "upstream_and"
  bool sanitize = true;                 ///< compute-sanitizer memcheck before correctness
  bool sandbox = true;                  ///< confine every runner (docs/sandbox.md); false only to diagnose a host
  std::string sanitizer_tools = "memcheck";  ///< comma list; racecheck, synccheck, initcheck on request
  bool dynamic_check = true;            ///< runtime target-instruction count (Nsight Compute)
  double call_timeout_s = 30;           ///< one candidate call (the paper's per-workload limit)
  double sanitize_timeout_s = 120;
  double profile_timeout_s = 600;
  /// Added to the first call of a runner whose candidate compiles its kernels at run time (Triton):
  /// the JIT compilation (and any autotuning) happens there, in the warm-up, never in a timed call.
  double jit_timeout_s = 300;
  uint64_t seed = 0;                    ///< 0 = derive from time; always recorded in the verdict
  /// How go/done reach the runner: "shared_memory" (a spin-polled shared page; the bound resolves
  /// tens of microseconds) or "socket" (the JSON round trip, ~1 ms; the fallback, and for comparison).
  /// docs/trusted-timing.md.
  std::string timing_channel = "shared_memory";
  /// A call whose launch audit shows tampering fails ("measurement tampered"). false records the
  /// findings in the timing details only (diagnosis: shows what the harness's bound alone does).
  bool tamper_check = true;
  /// --min-coverage: target-correct also needs a required family to have done this share of the
  /// task's work (eval/coverage.h); nullopt = the paper's rule. Applied by the orchestrator.
  std::optional<double> min_coverage;
  /// Where this host's GPU leases live (gpu/harness/device_lease.h); empty: $PTXBENCH_GPU_LOCK_DIR,
  /// else /tmp/ptxbench-gpu-locks. Every harness that shares a GPU must use the same folder.
  std::filesystem::path lease_dir;
  /// How long a stage waits for the GPU's lease before the evaluation fails as infrastructure.
  double lease_timeout_s = 900;
};

}  // namespace ptxbench
