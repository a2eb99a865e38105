#pragma once
// ptxbench-attention-probe: one GPU run that establishes what the loaded cuDNN supports for the
// attention baselines. It tries every graph variant at a small and at the headline shape (build,
// plans, execution, numerics against the fp32 reference) and times the four headline baselines
// exactly as the harness builds them. Results are plain records; attention_probe.cc prints them.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptxbench::gpu::probe {

struct shape {
  int64_t b = 0, h = 0, s = 0, d = 0;
};

struct settings {
  shape small{1, 2, 256, 128};
  shape headline{4, 48, 4096, 128};
  bool run_small = true;
  bool run_headline_variants = true;
  bool run_baselines = true;
  int warmup = 3;
  int iterations = 20;
  uint64_t seed = 2024;
};

struct numerics {
  std::string scope;            ///< "all heads" or "heads 0 and N-1"
  double max_abs_error = 0.0;   ///< over every checked output
  int64_t mismatches = 0;       ///< elements outside atol = rtol = 1e-2
  int64_t checked = 0;
  [[nodiscard]] bool pass() const { return mismatches == 0 && checked > 0; }
};

/// One attempt: a graph variant (or the autotuned baseline) on one shape.
struct record {
  std::string what;         ///< "unified_fwd", "composite_bwd", "baseline"
  std::string workload;     ///< "mha_fwd", "mha_fwd_causal", "mha_bwd", "mha_bwd_causal"
  shape dims;
  bool causal = false;
  bool required = false;    ///< a failure here means the baseline is broken (composite and baselines)
  bool built = false;
  std::string error;        ///< why it did not build or run
  std::string description;  ///< the executable's description when built
  std::vector<std::string> plans;
  std::optional<numerics> check;
  std::optional<double> median_ms;
  std::string inputs_note;  ///< how a backward's O and L were made
};

/// Runs everything `s` asks for on the current device; never throws (failures are records).
std::vector<record> run_probe(const settings& s);

/// The machine and library facts: cuDNN runtime/header versions, the cuDNN, NVRTC, cuBLAS and CUDA
/// library files actually loaded, CUDA runtime and driver versions, GPU name, SM version and count,
/// and cuDNN's device-property JSON of the GPU.
nlohmann::ordered_json environment_facts();

/// JSON for one record.
nlohmann::ordered_json to_json(const record& r);

}  // namespace ptxbench::gpu::probe
