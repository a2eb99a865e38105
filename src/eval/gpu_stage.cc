#include "eval/gpu_stage.h"

#include <unistd.h>

#include <random>

#include <fmt/format.h>

#include "core/build_info.h"
#include "core/file_io.h"
#include "core/process.h"
#include "eval/static_stage.h"
#include "eval/triton_stages.h"
#include "verdict/harness_protocol.h"
#include "verdict/stage_timer.h"

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

bool required_present(const verdict& v, const std::optional<family_counts>& counts) {
  if (!counts) return false;
  for (const auto& fam : v.targets.required_families) {
    auto it = counts->find(fam);
    if (it != counts->end() && it->second > 0) return true;
  }
  return false;
}

double harness_deadline_s(const gpu_options& o, const task& t, std::size_t candidates) {
  double per = o.sanitize_timeout_s * 2 + o.call_timeout_s * (t.correctness_trials + 12) + o.profile_timeout_s * 1.5 +
               (o.warmup + o.iterations) * std::min(o.call_timeout_s, 10.0) + 120;
  return 600 + per * static_cast<double>(candidates);
}

}  // namespace

void decide_target_verdict(verdict& v) {
  auto& t = v.targets;
  bool static_known = t.static_counts.has_value();
  bool static_present = required_present(v, t.static_counts);
  std::string families = fmt::format("{}", fmt::join(t.required_families, " or "));
  if (static_known && !static_present) {
    t.verdict = target_verdict::absent_in_sass;
    if (t.reason.empty()) t.reason = fmt::format("no {} instruction in the built SASS", families);
    return;
  }
  if (!v.passed()) {
    t.verdict = target_verdict::deferred;
    t.reason = fmt::format("not established: the runtime check runs only on correct kernels{}",
                           static_known ? fmt::format(" ({} present in SASS)", families) : "");
    return;
  }
  const stage_record* dyn = v.stage(stage_id::dynamic_check);
  if (!dyn || dyn->outcome == stage_outcome::skipped) {
    t.verdict = target_verdict::deferred;
    t.reason = "the runtime check was not run";
    return;
  }
  if (dyn->outcome == stage_outcome::error || !t.dynamic.counts) {
    t.verdict = target_verdict::profile_error;
    t.reason = dyn->summary;
    return;
  }
  std::string ran;
  for (const auto& fam : t.required_families) {
    auto it = t.dynamic.counts->find(fam);
    int64_t n = it == t.dynamic.counts->end() ? 0 : it->second;
    if (n > 0) ran += fmt::format("{}{} ({} predicate-on thread instructions)", ran.empty() ? "" : ", ", fam, n);
  }
  if (!ran.empty()) {
    t.verdict = target_verdict::executed;
    t.reason = "executed on the workload: " + ran;
  } else {
    t.verdict = target_verdict::not_executed;
    t.reason = fmt::format("{} present in SASS{} but never executed on the workload (0 predicate-on thread instructions)",
                           families, static_known ? "" : " (presumably)");
  }
}

harness_job make_harness_job(const task& t, const target_info& target, const pipeline_config& config) {
  fs::path harness = config.gpu.harness.empty() ? self_dir() / "ptxbench-harness" : config.gpu.harness;
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
  std::random_device rd;
  job.work_dir = config.cache_dir / "runs" / fmt::format("{}-{}-{:x}", t.name, utc_timestamp(), rd());
  return job;
}

job_candidate make_job_candidate(const gpu_candidate& c, const target_info& target, std::string id) {
  job_candidate jc;
  jc.id = std::move(id);
  jc.shared_object = c.built->shared_object;
  jc.language = c.language;
  jc.symbol = c.symbol;
  jc.required_families = target.required_families;
  jc.static_known = c.v->targets.static_counts.has_value();
  jc.static_present = required_present(*c.v, c.v->targets.static_counts);
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

void merge_gpu_result(const gpu_stage_result& r, const ordered_json& environment, verdict& v) {
  v.environment = environment;
  merge_into(r, v);
  if (v.decided.stage) mark_skipped_after(v.stages, *v.decided.stage, stage_id::dynamic_check);
}

void apply_gpu_result(const gpu_stage_result& r, const ordered_json& environment, verdict& v) {
  merge_gpu_result(r, environment, v);
  decide_target_verdict(v);
}

status run_gpu_stages(const task& t, const target_info& target, std::vector<gpu_candidate>& cands,
                      const pipeline_config& config) {
  if (cands.empty()) return ok();
  harness_job job = make_harness_job(t, target, config);
  fs::path harness = job.options.harness;
  if (!fs::exists(harness))
    return make_error(config.gpu.harness.empty()
                          ? fmt::format("{} not found: this build has no GPU harness (build with the CUDA toolkit)",
                                        harness.string())
                          : fmt::format("harness {} not found", harness.string()));
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (cands[i].language != "triton" || job.triton) continue;
    // Triton candidates run in the GPU host's python3 (with torch and Triton), through the bootstrap
    // in src/gpu/runner_py and the helper library built beside the runner.
    auto python = triton_python(config);
    if (!python) return make_error("python3 not found ($PTXBENCH_PYTHON, PATH): Triton candidates run in it (with torch and Triton)");
    triton_runtime tr{*python, config.root / "src" / "gpu" / "runner_py" / "ptxbench_triton_runner.py",
                      harness.parent_path() / "libptxbench_runner_py.so"};
    for (const auto& p : {tr.runner, tr.helper})
      if (!fs::exists(p)) return make_error(fmt::format("{} not found: the Triton runner needs it", p.string()));
    job.triton = tr;
  }
  for (std::size_t i = 0; i < cands.size(); ++i) job.candidates.push_back(make_job_candidate(cands[i], target, std::to_string(i)));
  fs::path job_file = job.work_dir / "job.json", result_file = job.work_dir / "result.json";
  if (auto st = write_file_atomic(job_file, to_json(job).dump(2)); !st) return st.err();
  double deadline = harness_deadline_s(config.gpu, t, cands.size());
  auto run = run_process({.argv = {harness.string(), "--job", job_file.string(), "--result", result_file.string()},
                          .timeout_s = deadline, .max_output_bytes = 1u << 20, .merge_stderr = true});
  auto text = read_text_file(result_file, 256u << 20);
  if (!text)
    return make_error(fmt::format("the GPU harness {} and wrote no result: {}", describe_exit(run, deadline),
                                  run.out.substr(0, 2000)));
  auto doc = parse_json(*text, result_file.string());
  if (!doc) return doc.err();
  if (doc->contains("error") && !(*doc)["error"].get<std::string>().empty())
    return make_error((*doc)["error"].get<std::string>());
  ordered_json env = verdict_environment(doc->value("environment", ordered_json::object()), job);
  const auto& results = (*doc)["candidates"];
  for (std::size_t i = 0; i < cands.size(); ++i) {
    verdict& v = *cands[i].v;
    if (i >= results.size()) {
      v.environment = env;
      v.decided = {eval_outcome::infra_error, std::nullopt,
                   fmt::format("the GPU harness {} before finishing this candidate", describe_exit(run, deadline)), ""};
      continue;
    }
    auto c = gpu_stage_result_from_json(results[i]);
    if (!c) return c.err();
    merge_gpu_result(*c, env, v);
    if (cands[i].language == "triton") {
      // Triton compiled on the GPU: the static SASS check reads the cubins of the warm-up now.
      if (auto st = run_static_sass_on_cubins(c->jit_cubins, target, config.cuda_root, v); !st) {
        v.decided = {eval_outcome::infra_error, std::nullopt, st.err().message, ""};
        continue;
      }
      v.environment["triton_kernels"] = c->jit_kernels;
    }
    decide_target_verdict(v);
  }
  return ok();
}

double candidate_deadline_s(const gpu_options& o, const task& t) { return harness_deadline_s(o, t, 1) - 600; }

}  // namespace ptxbench::eval
