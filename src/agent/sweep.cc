#include "agent/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "agent/progress.h"
#include "agent/summary.h"
#include "agent/turn_loop.h"
#include "core/file_io.h"
#include "core/file_lock.h"
#include "core/record_name.h"
#include "core/sha256.h"
#include "suite/trace.h"
#include "suite/unknown_target.h"

namespace ptxbench::agent {
namespace {

std::string file_safe(const std::string& s) {
  std::string out = s;
  for (char& c : out)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  return out;
}

uint64_t derive_seed(uint64_t base, const std::string& task, const std::string& target, const std::string& variant,
                     int index) {
  std::string hex = sha256_builder()
                        .update(std::to_string(base))
                        .update(task)
                        .update(target)
                        .update(variant)
                        .update(std::to_string(index))
                        .hex_digest();
  return std::stoull(hex.substr(0, 13), nullptr, 16);  // 52 bits: exact even for JSON readers that use doubles
}

// The fields whose change would make the existing trajectories answer a different question.
constexpr std::array<const char*, 11> k_plan_keys = {"model",        "target",         "language",
                                                     "turns",        "target_speedup", "history_policy",
                                                     "context_budget_tokens", "run_on_gpu", "evaluator",
                                                     "supervision",  "plan"};

std::string auth_message(const model_spec& m, const std::string& detail) {
  if (m.api_key_env.empty())
    return fmt::format("the API at {} refused the request ({}); model '{}' sends no key (set api_key_env in the models "
                       "file)", m.base_url, detail, m.name);
  return fmt::format("the API rejected the key in {} ({}); set a valid key", m.api_key_env, detail);
}

// A run writes into a new folder or into its own: never into one another command filled (a mined or
// pairs directory, a metrics output), where its plan and trajectories would mix with files it did
// not write. Its own folder holds plan.json, or (a plan removed, a kill before it was written) only
// what a run writes: the lock, summary.json and trajectories/ with trajectory files.
status check_out_dir_is_a_run(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec) || std::filesystem::exists(dir / "plan.json", ec)) return ok();
  if (!std::filesystem::is_directory(dir, ec)) return make_error(fmt::format("--out {}: not a folder", dir.string()));
  auto foreign = [&](const std::string& name) {
    return make_error(fmt::format("--out {} holds files a run did not write ({}); a run writes into a new folder or "
                                  "resumes its own (plan.json): choose a new --out",
                                  dir.string(), name));
  };
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name == ".run.lock" || (name == "summary.json" && e.is_regular_file())) continue;
    if (name != "trajectories" || !e.is_directory()) return foreign(name);
    for (const auto& t : std::filesystem::directory_iterator(e.path(), ec)) {
      const std::string file = t.path().filename().string();
      if (!t.is_regular_file() || (t.path().extension() != ".json" && file.find(".json.tmp.") == std::string::npos))
        return foreign("trajectories/" + file);
    }
  }
  return ok();
}

}  // namespace

std::vector<plan_item> expand_plan(const sweep_options& o, const task_variants& variants) {
  std::vector<plan_item> plan;
  for (const auto& [task, names] : variants)
    for (const auto& variant : names)
      for (int k = 0; k < o.trajectories; ++k) {
        plan_item item;
        item.index = static_cast<int>(plan.size());
        item.task = task;
        item.target = o.target;
        item.variant = variant;
        item.trajectory_index = k;
        item.seed = derive_seed(o.seed, task, o.target, variant, k);
        item.file = fmt::format("trajectories/{}__{}__{}__t{}.json", file_safe(task), file_safe(o.target),
                                file_safe(variant), k);
        plan.push_back(std::move(item));
      }
  return plan;
}

ordered_json plan_json(const sweep_options& o, const std::vector<plan_item>& plan, const model_spec& m,
                       const std::string& arch) {
  ordered_json items = ordered_json::array();
  for (const auto& p : plan) {
    ordered_json item = {{"index", p.index}, {"task", p.task}, {"target", p.target}, {"variant", p.variant},
                         {"trajectory_index", p.trajectory_index}, {"seed", p.seed}, {"file", p.file}};
    if (!p.source.is_null()) item["source"] = p.source;
    items.push_back(std::move(item));
  }
  return {{"format", "ptxbench.run-plan/1"},
          {"created", utc_timestamp()},
          {"ptxbench_version", PTXBENCH_VERSION},
          {"argv", o.argv},
          {"model", m.name},
          {"model_config", to_json(m)},
          {"target", o.target},
          {"language", o.language},
          {"arch", arch},
          {"tasks", o.tasks},
          {"variants", o.variants},
          {"trajectories", o.trajectories},
          {"turns", o.turns},
          {"target_speedup", o.target_speedup},
          {"history_policy", history_policy_name(o.policy)},
          {"context_budget_tokens", o.context_budget_tokens ? ordered_json(*o.context_budget_tokens) : ordered_json(nullptr)},
          {"run_on_gpu", o.run_on_gpu},
          {"evaluator", o.evaluator_name},
          {"seed", o.seed},
          {"supervision", o.supervision},
          {"plan", items}};
}

status check_plan_compatible(const ordered_json& existing, const ordered_json& wanted) {
  for (const char* key : k_plan_keys) {
    ordered_json have = existing.contains(key) ? existing[key] : ordered_json(nullptr);
    if (std::string(key) == "language" && have.is_null()) have = "cuda";  // plans from before --language
    if (have == wanted[key]) continue;
    if (std::string(key) == "plan")
      return make_error("the planned trajectories differ (tasks, variants, --trajectories or --seed changed)");
    if (std::string(key) == "supervision") return make_error(supervision_mismatch(have, wanted[key]));
    return make_error(fmt::format("{} is {} there but {} now", key, have.dump(), wanted[key].dump()));
  }
  return ok();
}

result<task_variants> resolve_task_variants(const sweep_options& o, const sweep_services& s) {
  // Names recorded in every trajectory follow the rule the metrics read them by (core/record_name.h).
  if (s.model)
    if (auto st = check_record_name(s.model->name, "--model"); !st) return st.err();
  const target_info* target = s.tasks->find_target(o.target);
  if (!target) return make_error(unknown_target_message(*s.tasks, o.target));
  task_variants out;
  for (const auto& name : o.tasks) {
    const task* t = s.tasks->find_task(name);
    if (!t) {
      std::vector<std::string> names;
      for (const auto& x : s.tasks->tasks) names.push_back(x.name);
      return make_error(unknown_name_message("task", name, names, "`ptxbench tasks` lists them"));
    }
    if (std::find(t->targets.begin(), t->targets.end(), o.target) == t->targets.end())
      return make_error(fmt::format("task '{}' does not target '{}'", name, o.target));
    if (std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.first == name; })) continue;
    std::vector<std::string> resolved;
    for (const auto& spec : o.variants) {
      std::string v = spec;
      if (s.resolve_variant) {
        auto r = s.resolve_variant(*t, *target, spec);
        if (!r) return r.err().with_context(fmt::format("task {}", name));
        v = *r;
      }
      if (auto st = check_record_name(v, "--variants"); !st) return st.err();
      if (auto p = s.prompts(*t, *target, v); !p) return p.err().with_context(fmt::format("task {}", name));
      if (std::find(resolved.begin(), resolved.end(), v) == resolved.end()) resolved.push_back(v);
    }
    out.emplace_back(name, std::move(resolved));
  }
  return out;
}

result<sweep_outcome> run_sweep(const sweep_options& o, sweep_services& s) {
  auto variants = resolve_task_variants(o, s);
  if (!variants) return variants.err();
  const target_info* target = s.tasks->find_target(o.target);
  auto plan = expand_plan(o, *variants);
  return run_plan(o, s, plan, plan_json(o, plan, *s.model, target->arch));
}

result<sweep_outcome> run_plan(const sweep_options& o, sweep_services& s, const std::vector<plan_item>& plan,
                               ordered_json wanted) {
  const target_info* target = s.tasks->find_target(o.target);
  if (!target) return make_error(unknown_target_message(*s.tasks, o.target));
  for (const auto& item : plan)
    if (!s.tasks->find_task(item.task) || item.target != o.target)
      return make_error(fmt::format("plan item {}: task '{}' on target '{}' is not in the suite or not this run's target",
                                    item.index, item.task, item.target));
  if (auto st = check_out_dir_is_a_run(o.out_dir); !st) return st.err();
  // RUN_DIR/.run.lock keeps two runs from writing the same trajectories.
  auto lock = file_lock::hold_directory(o.out_dir, ".run.lock", "ptxbench run");
  if (!lock) return lock.err();
  auto plan_path = o.out_dir / "plan.json";
  std::error_code ec;
  if (std::filesystem::exists(plan_path, ec)) {
    auto text = read_text_file(plan_path, 64u << 20);
    if (!text) return text.err();
    auto existing = parse_json(*text, plan_path.string());
    if (!existing) return existing.err();
    if (auto c = check_plan_compatible(*existing, wanted); !c)
      return make_error(fmt::format("{} was written for a different run: {}; re-run the same command to resume, or "
                                    "choose a new --out",
                                    plan_path.string(), c.err().message));
    wanted["created"] = (*existing)["created"];
  }
  if (auto w = write_file_atomic(plan_path, dump_pretty(wanted) + "\n"); !w) return w.err();
  std::filesystem::create_directories(o.out_dir / "trajectories", ec);
  // A kill between an atomic write's temporary file and its rename leaves "<file>.tmp.<hex>"
  // behind; with the run lock held nobody else is writing, so these are litter.
  // Listed first, removed after: removing entries while a directory is being read may make the
  // reader skip others.
  std::vector<std::filesystem::path> litter;
  for (auto it = std::filesystem::directory_iterator(o.out_dir / "trajectories", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    if (it->path().filename().string().find(".json.tmp.") != std::string::npos) litter.push_back(it->path());
  for (const auto& p : litter) {
    std::error_code rm;
    std::filesystem::remove(p, rm);
  }

  auto slots = eval_slots::create(o.gpus, s.make_evaluator);
  if (!slots) return slots.err();

  std::optional<int64_t> budget = o.context_budget_tokens;
  if (!budget && s.model->context_window_tokens)
    budget = *s.model->context_window_tokens - s.model->max_output_tokens().value_or(0) - 1024;

  std::atomic<bool> stop{false};
  std::atomic<std::size_t> next{0};
  std::mutex stop_mutex;
  std::string stop_message;
  exit_status stop_status = exit_status::ok;
  auto request_stop = [&](exit_status st, const std::string& msg) {
    std::lock_guard lock(stop_mutex);
    if (stop_status == exit_status::ok) {
      stop_status = st;
      stop_message = msg;
    }
    stop = true;
  };
  progress_display progress(s.log, o.progress_bar, o.quiet, static_cast<int>(plan.size()),
                            static_cast<int>(plan.size()) * o.turns);
  ordered_json environment = {{"evaluator", o.evaluator_name}, {"run_on_gpu", o.run_on_gpu},
                              {"gpus", o.gpus}, {"target", target->name}, {"arch", target->arch},
                              {"ptxbench_version", PTXBENCH_VERSION}};
  auto worker = [&] {
    while (true) {
      if (s.interrupt && s.interrupt->load()) request_stop(exit_status::interrupted, "interrupted");
      if (stop) return;
      std::size_t i = next.fetch_add(1);
      if (i >= plan.size()) return;
      const plan_item& item = plan[i];
      trajectory_spec spec;
      spec.t = s.tasks->find_task(item.task);
      spec.target = target;
      spec.variant = item.variant;
      spec.language = o.language;
      spec.index = item.trajectory_index;
      spec.turn_limit = o.turns;
      spec.target_speedup = o.target_speedup;
      spec.policy = o.policy;
      spec.budget_tokens = budget;
      spec.seed = item.seed;
      spec.file = o.out_dir / item.file;
      spec.model_name = s.model->name;
      spec.model_json = to_json(*s.model);
      spec.environment_json = environment;
      spec.run_on_gpu = o.run_on_gpu;
      spec.eval_retries = o.eval_retries;
      spec.eval_retry_delay_s = o.eval_retry_delay_s;
      if (s.supervise) spec.supervision = s.supervise(item);
      // Stop before the next model call on Ctrl-C or when another trajectory hit a failure.
      prompt_builder prompts = s.prompts;
      if (item.prompts) {
        auto fixed = item.prompts;
        prompts = [fixed](const task&, const target_info&, const std::string&) -> result<prompt_pair> { return *fixed; };
      }
      loop_services svc{s.llm, slots->get(), prompts, &stop,
                        [&, i](const turn_report& r) { progress.turn_done(static_cast<int>(i), r); }, s.sleep};
      progress.trajectory_started(static_cast<int>(i),
                                  fmt::format("{} {} t{}", item.task, item.variant, item.trajectory_index));
      trajectory_result r = run_trajectory(spec, svc);
      progress.trajectory_done(static_cast<int>(i), std::filesystem::path(item.file).stem().string(), r);
      std::string where = std::filesystem::path(item.file).stem().string();
      switch (r.end) {
        case trajectory_end::auth_error: request_stop(exit_status::infra, auth_message(*s.model, r.message)); break;
        case trajectory_end::api_error:
          request_stop(exit_status::infra, fmt::format("model API failure in {}: {}", where, r.message));
          break;
        case trajectory_end::infra_error:
          request_stop(exit_status::infra, fmt::format("{}: {}", where, r.message));
          break;
        case trajectory_end::setup_error: request_stop(exit_status::usage, r.message); break;
        case trajectory_end::stopped:
          if (s.interrupt && s.interrupt->load()) request_stop(exit_status::interrupted, "interrupted");
          break;
        default: break;
      }
    }
  };
  // The watcher turns Ctrl-C into a stop even while every worker is inside a long model call.
  std::atomic<bool> workers_done{false};
  std::thread watcher([&] {
    while (!workers_done) {
      if (s.interrupt && s.interrupt->load()) request_stop(exit_status::interrupted, "interrupted");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  std::vector<std::thread> workers;
  int n = std::max(1, std::min<int>(o.parallel, static_cast<int>(plan.size())));
  for (int w = 0; w < n; ++w) workers.emplace_back(worker);
  for (auto& w : workers) w.join();
  workers_done = true;
  watcher.join();

  sweep_outcome out;
  out.status = stop_status;
  out.message = stop_message;
  if (stop_status == exit_status::infra || stop_status == exit_status::interrupted)
    out.message += "; finished turns are saved: re-run the same command to resume";
  out.summary = summarize_run(o.out_dir, plan, o.turns, stop_message);
  if (auto w = write_file_atomic(o.out_dir / "summary.json", dump_pretty(out.summary) + "\n"); !w) return w.err();
  return out;
}

}  // namespace ptxbench::agent
