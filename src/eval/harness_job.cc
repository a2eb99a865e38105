#include "eval/harness_job.h"

#include <unistd.h>

#include <random>

#include <fmt/format.h>

#include "core/build_info.h"
#include "core/file_io.h"
#include "core/process.h"
#include "eval/target_verdict.h"
#include "eval/triton_stages.h"

namespace ptxbench::eval {
namespace fs = std::filesystem;
namespace {

fs::path self_dir() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path(".") : p.parent_path();
}

uint64_t fresh_seed() {
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 20 ^ rd()) & ((uint64_t{1} << 48) - 1);
}

/// Triton candidates run in the GPU host's python3 (with torch and Triton), through the bootstrap in
/// src/gpu/runner_py and the helper library built beside the runner.
result<triton_runtime> find_triton_runtime(const pipeline_config& config, const fs::path& harness) {
  auto python = triton_python(config);
  if (!python) return make_error("python3 not found ($PTXBENCH_PYTHON, PATH): Triton candidates run in it (with torch and Triton)");
  const fs::path runner_py = config.root / "src" / "gpu" / "runner_py";
  triton_runtime tr{*python, runner_py / "ptxbench_triton_runner.py", harness.parent_path() / "libptxbench_runner_py.so",
                    runner_py / "triton_recompile.py"};
  for (const auto& p : {tr.runner, tr.helper, tr.recompiler})
    if (!fs::exists(p)) return make_error(fmt::format("{} not found: the Triton runner needs it", p.string()));
  return tr;
}

}  // namespace

fs::path harness_path(const pipeline_config& config) {
  return config.gpu.harness.empty() ? self_dir() / "ptxbench-harness" : config.gpu.harness;
}

harness_job make_harness_job(const task& t, const target_info& target, const pipeline_config& config,
                             std::string* triton_missing) {
  fs::path harness = harness_path(config);
  harness_job job;
  job.task_name = t.name;
  job.def = t.def;
  job.wl = t.wl;
  job.baseline = t.baseline;
  job.baseline_options = t.baseline_options;
  job.tol = t.tol;
  job.correctness_trials = t.correctness_trials;
  job.options = config.gpu;
  job.options.harness = harness;
  job.runner = harness.parent_path() / "ptxbench-runner";
  job.cuda_root = config.cuda_root;
  job.cache_dir = config.cache_dir;
  job.seed = config.gpu.seed ? config.gpu.seed : fresh_seed();
  if (t.work && target.peaks) job.physical_floor = floor_inputs{target.name, *t.work, *target.peaks};
  if (auto tr = find_triton_runtime(config, harness)) job.triton = *tr;
  else if (triton_missing) *triton_missing = tr.err().message;
  std::random_device rd;
  job.work_dir = config.cache_dir / "runs" / fmt::format("{}-{}-{:x}", t.name, utc_timestamp(), rd());
  return job;
}

job_candidate make_job_candidate(const build::build_result& built, const std::string& symbol, const std::string& language,
                                 const verdict& v, const target_info& target, std::string id) {
  job_candidate jc;
  jc.id = std::move(id);
  jc.shared_object = built.shared_object;
  jc.language = language;
  jc.symbol = symbol;
  jc.required_families = target.required_families;
  jc.static_known = v.targets.static_counts.has_value();
  jc.static_present = required_present(v, v.targets.static_counts);
  for (const auto& [kernel, counts] : v.targets.static_per_kernel) jc.kernels.push_back(kernel);
  return jc;
}

ordered_json verdict_environment(const ordered_json& harness_environment, const harness_job& job) {
  ordered_json env = harness_environment.is_object() ? harness_environment : ordered_json::object();
  env["harness_work_dir"] = job.work_dir.string();
  env["seed"] = job.seed;
  const auto self = this_build();
  env["ptxbench"] = {{"version", self.version}, {"git_commit", self.git_commit}};
  return env;
}

double candidate_deadline_s(const gpu_options& o, const task& t) {
  return o.sanitize_timeout_s * 2 + o.call_timeout_s * (t.correctness_trials + 12) + o.profile_timeout_s * 1.5 +
         (o.warmup + std::max(o.iterations, o.min_pairs)) * std::min(o.call_timeout_s, 10.0) + o.timing_cap_s +
         o.lease_timeout_s * 5 + 120;
}

}  // namespace ptxbench::eval
