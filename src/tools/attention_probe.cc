// ptxbench-attention-probe: what the loaded cuDNN supports for the attention baselines, in one GPU
// run. Prints a table; with --json (or $OUT set) also writes the records as JSON.
//
//   ptxbench-attention-probe                      # small + headline variants + the 4 baselines
//   ptxbench-attention-probe --baselines-only     # just the 4 headline baselines (for the bench)
//   ptxbench-attention-probe --json probe.json --iterations 50

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tools/attention_probe.h"
#include "baselines/cudnn_backend.h"

namespace {

using ptxbench::gpu::probe::record;

std::string cell(const record& r) {
  if (!r.built) return "FAILED";
  if (!r.check) return "built, not run";
  return r.check->pass() ? "ok" : fmt::format("WRONG ({} bad)", r.check->mismatches);
}

void print_table(const std::vector<record>& records) {
  fmt::print("\n{:<14} {:<16} {:<22} {:<16} {:>12} {:>11}\n", "variant", "workload", "shape B,H,S,D", "numerics",
             "max |err|", "median ms");
  for (const record& r : records) {
    fmt::print("{:<14} {:<16} {:<22} {:<16} {:>12} {:>11}\n", r.what, r.workload,
               fmt::format("{},{},{},{}", r.dims.b, r.dims.h, r.dims.s, r.dims.d), cell(r),
               r.check ? fmt::format("{:.3g}", r.check->max_abs_error) : "-",
               r.median_ms ? fmt::format("{:.3f}", *r.median_ms) : "-");
  }
  fmt::print("\n");
  for (const record& r : records) {
    if (!r.error.empty()) fmt::print("{} {} S={}: {}\n", r.what, r.workload, r.dims.s, r.error);
  }
  for (const record& r : records) {
    if (!r.description.empty()) fmt::print("{} {} S={}: {}\n", r.what, r.workload, r.dims.s, r.description);
  }
}

bool required_ok(const std::vector<record>& records) {
  for (const record& r : records) {
    if (r.required && !(r.built && r.check && r.check->pass())) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ptxbench-attention-probe: which cuDNN attention graphs work here, are they right, how fast"};
  ptxbench::gpu::probe::settings s;
  std::string json_path;
  bool baselines_only = false, skip_headline_variants = false;
  app.add_option("--json", json_path, "write the records here (default: $OUT/attention_probe.json when OUT is set)");
  app.add_option("--iterations", s.iterations, "timed runs per measurement (median reported)")->check(CLI::Range(1, 10000));
  app.add_option("--warmup", s.warmup, "untimed runs before timing")->check(CLI::Range(0, 1000));
  app.add_option("--seed", s.seed, "seed of the normal Q, K, V, dO fills");
  app.add_option("--headline-seq", s.headline.s, "S of the headline shape (B=4, H=48, D=128)")->check(CLI::Range(1, 1 << 20));
  app.add_flag("--baselines-only", baselines_only, "only the four headline baselines (as the harness builds them)");
  app.add_flag("--skip-headline-variants", skip_headline_variants, "no per-variant runs at the headline shape");
  CLI11_PARSE(app, argc, argv);
  if (baselines_only) s.run_small = s.run_headline_variants = false;
  if (skip_headline_variants) s.run_headline_variants = false;
  if (json_path.empty()) {
    if (const char* out = std::getenv("OUT"); out != nullptr && *out != '\0') json_path = std::string(out) + "/attention_probe.json";
  }

  fmt::print("cuDNN loaded: {} (headers {})\n", ptxbench::gpu::cudnn::runtime_version().str(),
             ptxbench::gpu::cudnn::compiled_version().str());
  std::fflush(stdout);
  const std::vector<record> records = ptxbench::gpu::probe::run_probe(s);
  const nlohmann::ordered_json env = ptxbench::gpu::probe::environment_facts();
  fmt::print("{}\n", env.dump(2));
  print_table(records);
  const bool ok = required_ok(records);
  fmt::print("probe: {}\n", ok ? "every composite variant and baseline built and matched the reference"
                                : "PROBLEMS: a required variant or baseline failed or mismatched (see above)");

  if (!json_path.empty()) {
    nlohmann::ordered_json doc{{"format", "ptxbench.attention_probe/1"},
                               {"argv", std::vector<std::string>(argv, argv + argc)},
                               {"environment", env},
                               {"settings", {{"iterations", s.iterations}, {"warmup", s.warmup}, {"seed", s.seed}}},
                               {"all_required_ok", ok},
                               {"records", nlohmann::ordered_json::array()}};
    for (const record& r : records) doc["records"].push_back(ptxbench::gpu::probe::to_json(r));
    std::ofstream file(json_path);
    file << doc.dump(2) << "\n";
    if (!file) {
      fmt::print(stderr, "cannot write {}\n", json_path);
      return 3;
    }
    fmt::print("wrote {}\n", json_path);
  }
  return ok ? 0 : 1;
}
