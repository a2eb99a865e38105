#include "cli/candidate_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cli/gpu_presence.h"
#include "cli/option_checks.h"
#include "cli/output_paths.h"
#include "cli/print_verdict.h"
#include "cli/service_options.h"
#include "cli/target_choice.h"
#include "service/remote_evaluator.h"
#include "core/file_io.h"
#include "eval/harness_job.h"
#include "eval/pipeline.h"
#include "eval/triton_stages.h"
#include "suite/binding.h"
#include "suite/task.h"
#include "suite/unknown_target.h"
#include "verdict/verdict_json.h"

namespace ptxbench::cli {
namespace fs = std::filesystem;
namespace {

// A candidate file is read whole; anything beyond this is refused before the gate even looks.
constexpr std::size_t k_max_candidate_file = 16u << 20;

/// A candidate file as read and checked, before the target is known: a Solution JSON complete, a
/// kernel file as text (its Solution needs the target's build flags).
struct candidate_input {
  std::string file;
  std::string text;
  std::optional<solution> sol;
};

/// Reads and checks a candidate file; everything a bad file can be wrong about is found here, before
/// the command asks anything of the GPU.
result<candidate_input> read_candidate(const std::string& file, const std::string& task_name) {
  const auto ext = fs::path(file).extension().string();
  if (ext != ".json" && ext != ".cu" && ext != ".py")
    return make_error(fmt::format("{}: expected a .cu kernel, a Triton .py file or a Solution .json file{}", file,
                                  ext.empty() ? "" : ", not a " + ext + " file"));
  auto text = read_text_file(file, k_max_candidate_file);
  if (!text) return text.err();
  if (ext != ".json") return candidate_input{file, std::move(*text), std::nullopt};
  {
    auto j = parse_json(*text, file);
    if (!j) return j.err();
    auto sol = solution_from_json(*j, file);
    if (!sol) return sol.err();
    if (!task_name.empty() && sol->definition != task_name)
      return make_error(fmt::format("{}: solution is for '{}', not for --task {}", file, sol->definition, task_name));
    if (sol->spec.language != "cuda" && sol->spec.language != "cpp" && sol->spec.language != "triton")
      return make_error(fmt::format("{}: language '{}' is not supported (cuda, cpp or triton)", file, sol->spec.language));
    if (eval::is_triton(*sol)) return candidate_input{file, "", std::move(*sol)};  // Python: no native binding
    if (auto binding = binding_of(*sol); !binding) return binding.err().with_context(file);
    // nvcc builds the .cu sources; a Solution without one has nothing to build.
    if (std::none_of(sol->sources.begin(), sol->sources.end(),
                     [](const source_file& f) { return fs::path(f.path).extension() == ".cu"; }))
      return make_error(fmt::format("{}: sources: no .cu file among them (nvcc builds .cu sources)", file));
    return candidate_input{file, "", std::move(*sol)};
  }
}

/// The candidate's Solution for the chosen target (a Solution JSON as it was).
solution candidate_solution(const candidate_input& in, const suite& s, const std::string& task_name,
                            const std::string& target_name) {
  if (in.sol) return *in.sol;
  const task* t = s.find_task(task_name);
  const target_info* target = s.find_target(target_name);
  const std::string name = fs::path(in.file).filename().string();
  // A .py file is a Triton candidate (kernel.py::run); anything else a CUDA kernel file.
  if (fs::path(in.file).extension() == ".py") return eval::solution_for_triton_file(name, in.text, *t, *target);
  return eval::solution_for_kernel_file(name, in.text, *t, *target);
}

// Several candidates: the exit status is the worst one (infra > refused as bad input > candidate
// failed > not target-correct > ok).
int severity(exit_status s) {
  switch (s) {
    case exit_status::infra: return 4;
    case exit_status::usage: return 3;
    case exit_status::candidate_failed: return 2;
    case exit_status::not_target_correct: return 1;
    default: return 0;
  }
}

// --remote's connection settings: the URL and the bearer token (--token-file, else $PTXBENCH_SERVICE_TOKEN).
result<service::client_settings> remote_settings(const candidate_options& opts) {
  service::client_settings cs;
  cs.url = opts.remote;
  // Never silence while the server cannot be reached: say so, and that it is being retried.
  auto said = std::make_shared<std::mutex>();
  cs.on_retry = [said](const std::string& line) {
    std::lock_guard lock(*said);
    std::fprintf(stderr, "ptxbench: %s\n", line.c_str());
  };
  auto token = client_token(opts.token_file);
  if (!token) return token.err();
  cs.token = *token;
  return cs;
}

result<std::unique_ptr<service::service_client>> remote_client(const candidate_options& opts) {
  auto cs = remote_settings(opts);
  if (!cs) return cs.err();
  return service::service_client::create(*cs);
}

// --remote: every candidate submitted to the service at once (each waits on its own thread), the
// verdicts printed exactly as a local evaluation's. A submission the service refuses (the request is
// wrong) is marked in `refused`.
result<std::vector<result<verdict>>> evaluate_remote(const candidate_options& opts, const std::vector<eval_request>& requests,
                                                     std::vector<ordered_json>& records, std::vector<int>& refused) {
  auto settings = remote_settings(opts);
  if (!settings) return settings.err();
  const service::client_settings cs = *settings;
  if (auto probe = service::service_client::create(cs); !probe) return probe.err();
  std::vector<result<verdict>> out(requests.size(), make_error("not evaluated"));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < requests.size(); ++i)
    threads.emplace_back([&, i] {
      auto client = service::service_client::create(cs);
      service::remote_options ro;
      ro.target = requests[i].target->name;  // without --target, the one the service's GPUs serve
      ro.bypass_cache = opts.bypass_cache;
      int refused_status = 0;
      auto response = service::evaluate_remotely(**client, requests[i].candidate, requests[i].run_on_gpu, ro, &refused_status);
      if (!response) {
        out[i] = response.err();
        refused[i] = refused_status != 0 ? 1 : 0;
        return;
      }
      records[i] = response->value("ptxbench", ordered_json::object());
      records[i].erase("verdict");
      out[i] = service::verdict_of_response(*response);
    });
  for (auto& t : threads) t.join();
  return out;
}

}  // namespace

void add_candidate_options(CLI::App& cmd, candidate_options& opts) {
  cmd.add_option("kernels", opts.files, "candidate kernel .cu files, Triton .py files (kernel.py::run) or Solution .json files")
      ->required()
      ->default_str("");
  cmd.add_option("--task", opts.task, "task name (see `ptxbench tasks`); optional for a Solution JSON");
  cmd.add_option("--target", opts.target,
                 "target GPU: h100, h200 or b200 (default: the local GPU's target; h200 where no GPU decides)");
  cmd.add_flag("--json", opts.json, "print the verdict as JSON (an array for several candidates)");
  cmd.add_option("--out", opts.out, "also write the JSON verdict(s) to this file")->each([&opts](const std::string&) {
    opts.out_given = true;
  });
  cmd.add_option("--compile-timeout", opts.compile_timeout_s, "seconds before nvcc is stopped")->check(timeout_seconds());
  cmd.add_option("--remote", opts.remote, "evaluate through a PTXBench service (http://HOST:PORT) instead of locally");
  cmd.add_option("--token-file", opts.token_file, "--remote: a file holding the service's bearer token");
  cmd.add_flag("--bypass-cache", opts.bypass_cache, "--remote: evaluate again even when the service has the verdict cached");
}

exit_status run_candidates(const context& ctx, const candidate_options& opts, bool run_on_gpu) {
  if (opts.out_given)
    if (auto st = check_output_file(opts.out, "--out"); !st) return report_error(st.err().message, exit_status::usage);
  if (auto st = check_output_dir(ctx.cache_dir.string(), ctx.cache_dir_named_by); !st)
    return report_error(st.err().message, exit_status::usage);
  if (!opts.gpu.harness.empty()) {
    std::error_code ec;
    if (!fs::is_regular_file(opts.gpu.harness, ec))
      return report_error(fmt::format("--harness {}: no such file", opts.gpu.harness.string()), exit_status::usage);
    if (::access(opts.gpu.harness.c_str(), X_OK) != 0)
      return report_error(fmt::format("--harness {}: not executable", opts.gpu.harness.string()), exit_status::usage);
  }
  // The suite is loaded once per process; every request carries the task and target it resolved to.
  auto s = load_suite(ctx.suite_dir());
  if (!s) return report_error(s.err().message, exit_status::usage);
  if (!opts.target.empty() && !s->find_target(opts.target)) {
    return report_error(unknown_target_message(*s, opts.target),
                        exit_status::usage);
  }
  bool all_json = !opts.files.empty();
  for (const auto& f : opts.files) all_json = all_json && fs::path(f).extension() == ".json";
  if (opts.task.empty() && !all_json) return report_error("--task is required for a .cu or .py kernel", exit_status::usage);
  if (!opts.task.empty() && !s->find_task(opts.task))  // the unknown-task message, whatever the target
    return report_error(resolve_evaluation(*s, opts.task, opts.target, run_on_gpu).err().message, exit_status::usage);
  // Every file is read and checked before anything is asked of the GPU: a bad file is a usage error
  // on any machine.
  std::vector<candidate_input> inputs;
  for (const auto& file : opts.files) {
    auto in = read_candidate(file, opts.task);
    if (!in) return report_error(in.err().message, exit_status::usage);
    inputs.push_back(std::move(*in));
  }
  eval::pipeline_config config;
  config.root = ctx.root;
  config.cache_dir = ctx.cache_dir;
  config.cuda_root = ctx.cuda_root;
  config.compile_timeout_s = opts.compile_timeout_s;
  config.gpu = opts.gpu;
  // `eval` and `check` exit once the verdicts are written: their harnesses end without being awaited.
  config.await_harness_exit = false;
  const bool local_gpu = run_on_gpu && opts.remote.empty();
  if (local_gpu && opts.target.empty())
    if (auto why = missing_gpu())
      return report_error(*why + "; `ptxbench check` runs the CPU stages (gates, build, static SASS)", exit_status::infra);
  result<std::string> chosen = make_error("");
  if (!opts.remote.empty() && opts.target.empty()) {
    // The service's own GPU decides, as it would for a submission that names no target.
    auto client = remote_client(opts);
    chosen = client ? service::served_target(**client) : result<std::string>(client.err());
    if (!chosen) return report_error(chosen.err().message, exit_status::infra);
  } else {
    chosen = choose_target(*s, {opts.target, local_gpu, opts.gpu.device, eval::harness_path(config)});
    if (!chosen) return report_error(chosen.err().message, exit_status::usage);
  }
  const std::string target_name = *chosen;
  if (!opts.task.empty())
    if (auto p = resolve_evaluation(*s, opts.task, target_name, run_on_gpu); !p)
      return report_error(p.err().message, exit_status::usage);

  auto evaluator = eval::make_pipeline_evaluator(config);

  std::vector<eval_request> requests;
  for (const auto& in : inputs) {
    const std::string& task_name = opts.task.empty() ? in.sol->definition : opts.task;
    auto p = resolve_evaluation(*s, task_name, target_name, run_on_gpu);
    if (!p) return report_error(fmt::format("{}: {}", in.file, p.err().message), exit_status::usage);
    requests.push_back({p->t, p->target, candidate_solution(in, *s, task_name, target_name), run_on_gpu});
  }
  std::vector<ordered_json> service_records(requests.size());
  std::vector<int> refused(requests.size(), 0);  // not vector<bool>: threads write their own element
  std::vector<result<verdict>> verdicts;
  if (opts.remote.empty()) {
    // Decided here, before any build: without a GPU the harness could only fail with a CUDA error.
    if (run_on_gpu && std::any_of(requests.begin(), requests.end(), [](const eval_request& r) {
          return r.target->verification == "runtime";
        }))
      if (auto why = missing_gpu())
        return report_error(*why + "; `ptxbench check` runs the CPU stages (gates, build, static SASS)",
                            exit_status::infra);
    verdicts = evaluator->evaluate_batch(requests);
  } else {
    auto remote = evaluate_remote(opts, requests, service_records, refused);
    if (!remote) return report_error(remote.err().message, exit_status::usage);
    verdicts = std::move(*remote);
  }
  ordered_json all = ordered_json::array();
  exit_status worst = exit_status::ok;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    const auto& file = opts.files[i];
    auto& v = verdicts[i];
    exit_status code;
    if (!v) {
      std::fprintf(stderr, "ptxbench: %s: %s\n", file.c_str(), v.err().message.c_str());
      all.push_back({{"file", file}, {"error", v.err().message}});
      code = refused[i] ? exit_status::usage : exit_status::infra;  // a refused request is bad input
    } else {
      all.push_back(to_json(*v));
      all.back()["file"] = file;
      if (!service_records[i].is_null()) all.back()["service"] = service_records[i];
      if (!opts.json) std::fputs(verdict_text(*v, file, ctx.verbose).c_str(), stdout);
      if (opts.files.size() > 1 && !opts.json) std::fputs("\n", stdout);
      code = verdict_exit_status(*v);
    }
    if (severity(code) > severity(worst)) worst = code;
    std::fflush(stdout);
  }
  ordered_json out = opts.files.size() == 1 ? all[0] : all;
  if (opts.json) std::puts(out.dump(2).c_str());
  if (opts.out_given)
    if (auto st = write_file_atomic(opts.out, out.dump(2) + "\n"); !st) return report_error(st.err().message, exit_status::infra);
  return worst;
}

}  // namespace ptxbench::cli
