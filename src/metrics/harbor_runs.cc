#include "metrics/harbor_runs.h"

#include <algorithm>

#include <fmt/format.h>

#include "harbor/trial.h"
#include "verdict/reported_speedup.h"
#include "verdict/verdict_json.h"

namespace ptxbench::metrics {
namespace fs = std::filesystem;
namespace {

// What the report shows of an observation at most (the turn strip is a summary, not an archive).
constexpr std::size_t k_max_feedback_chars = 64 * 1024;

std::string model_label(const harbor::trial& t) {
  if (t.agent.empty() && t.model.empty()) return "unknown";
  if (t.agent.empty()) return t.model;
  if (t.model.empty()) return t.agent;
  return t.agent + ":" + t.model;  // one agent with two models, or two agents with one model, stay apart
}

std::optional<double> best_coverage(const verdict& v) {
  std::optional<double> best;
  for (const auto& [family, c] : v.targets.coverage)
    if (c.fraction && (!best || *c.fraction > *best)) best = c.fraction;
  return best;
}

bool is_fake(const verdict& v) {
  return (v.timing && v.timing->method == "fake") || v.targets.dynamic.method == "fake";
}

// One turn from one verdict, the way the agent's trajectory records a turn (agent/turn_messages.cc).
turn_record verdict_turn(const verdict& v, turn_record r) {
  r.label = v.outcome();
  r.source_label = std::string(outcome_name(v.outcome()));
  r.target_verdict = std::string(target_verdict_name(v.targets.verdict));
  r.target_correct = v.passed() && v.targets.verdict == target_verdict::executed;
  if (v.passed()) r.speedup = reported_speedup(v);
  r.static_counts = v.targets.static_counts;
  r.dynamic_counts = v.targets.dynamic.counts;
  r.coverage = best_coverage(v);
  if (r.arch.empty()) r.arch = v.arch;
  return r;
}

struct trial_reading {
  const harbor::trial& t;
  const std::string& run_dir;
  std::vector<data_warning>& warnings;
  trajectory out;
  turn_record base;
  int next_turn = 0;
  bool fake = false;

  void warn(warning_kind kind, const std::string& source, const std::string& message) {
    warnings.push_back({kind, source, message});
  }

  void add(turn_record r, turn_text text) {
    r.turn = next_turn;
    if (r.counted()) ++next_turn;  // an infrastructure failure is not a turn of the agent's
    out.turns.push_back(std::move(r));
    out.texts.push_back(std::move(text));
  }

  // A verdict JSON → a turn, or nullopt when it is not one of this trial's (another task or
  // target, or a CPU-only check).
  result<std::optional<verdict>> usable(const ordered_json& j, const std::string& where) {
    auto v = verdict_from_json(j);
    if (!v) return v.err().with_context(where);
    if (v->mode != eval_mode::eval) return std::optional<verdict>();
    if ((!base.definition.empty() && v->task != base.definition) || (!base.target.empty() && v->target != base.target)) {
      warn(warning_kind::other_task_evaluation, where,
           fmt::format("{}: evaluates {} on {}, not the trial's {} on {}; not counted", where, v->task, v->target,
                       base.definition, base.target));
      return std::optional<verdict>();
    }
    if (base.definition.empty()) base.definition = v->task;
    if (base.target.empty()) base.target = v->target;
    fake = fake || is_fake(*v);
    return std::optional<verdict>(std::move(*v));
  }

  status read_steps() {
    if (!t.trajectory) return ok();
    const std::string file = (t.dir / "agent" / "trajectory.json").string();
    for (const auto& step : t.trajectory->steps) {
      if (step.verdicts.empty()) continue;
      const std::string where = fmt::format("{} step {}", file, step.step_id);
      auto v = usable(step.verdicts.back(), where);
      if (!v) return v.err();
      if (!*v) continue;
      turn_record r = verdict_turn(**v, base);
      r.completion_tokens = step.completion_tokens;
      r.reasoning_tokens = step.reasoning_tokens;
      r.cost_usd = step.cost_usd;
      add(std::move(r), {"", step.observation.substr(0, k_max_feedback_chars), (*v)->decided.message});
    }
    return ok();
  }

  status read_final() {
    const std::string vdir = (t.dir / "verifier").string();
    const std::string verdict_file = (t.dir / "verifier" / "verdict.json").string();
    if (!t.summary && !t.final_verdict) {
      warn(warning_kind::unfinished_trajectory, t.dir.string(),
           fmt::format("{}: no verifier result (no {}/ptxbench.json){}; the final kernel is not counted", t.dir.string(),
                       vdir, t.exception.empty() ? "" : ": the trial ended with " + t.exception));
      return ok();
    }
    if (t.summary) {
      const auto& s = *t.summary;
      if (t.reward && (!s.reward || *t.reward != *s.reward))
        return make_error(fmt::format("{}/reward.txt: {} contradicts ptxbench.json's reward {}", vdir, *t.reward,
                                      s.reward ? std::to_string(*s.reward) : std::string("null")));
      if (s.kernel_state != "present") {
        turn_record r = base;
        r.label = eval_outcome::no_code;
        r.source_label = "no_code";
        add(std::move(r), {"", s.message, s.message});
        return ok();
      }
      if (!s.reward) {
        turn_record r = base;
        r.label = eval_outcome::infra_error;
        r.source_label = "infra_error";
        add(std::move(r), {t.final_kernel, s.message, s.message});
        warn(warning_kind::unfinished_trajectory, vdir,
             fmt::format("{}: the verifier could not evaluate the final kernel ({}); not counted", vdir, s.message));
        return ok();
      }
      if (!t.final_verdict) {
        warn(warning_kind::unreadable_trajectory, verdict_file,
             fmt::format("{}: missing or unreadable although ptxbench.json has a reward; the final kernel is not counted",
                         verdict_file));
        return ok();
      }
    }
    auto v = usable(*t.final_verdict, verdict_file);
    if (!v) return v.err();
    if (!*v) return make_error(fmt::format("{}: not a `ptxbench eval` verdict of the trial's task", verdict_file));
    const verdict& last = **v;
    const bool rewarded = last.passed() && last.target_correct();
    if (t.summary && t.summary->reward && *t.summary->reward != (rewarded ? 1 : 0))
      return make_error(fmt::format("{}/ptxbench.json: reward {} contradicts the verdict ({}, {})", vdir,
                                    *t.summary->reward, outcome_name(last.outcome()),
                                    last.target_correct() ? "target-correct" : "not target-correct"));
    add(verdict_turn(last, base), {t.final_kernel, t.summary ? t.summary->message : "", last.decided.message});
    return ok();
  }
};

}  // namespace

bool is_harbor_run(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_directory(dir / "trajectories", ec)) return false;
  if (harbor::is_trial_dir(dir)) return true;
  if (!fs::is_directory(dir, ec)) return false;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && harbor::is_trial_dir(e.path())) return true;
  return false;
}

result<run_data> read_harbor_run(const fs::path& dir) {
  auto dirs = harbor::trial_dirs(dir);
  if (!dirs) return dirs.err();
  run_data run{dir.string(), {}, {}};
  for (const auto& d : *dirs) {
    auto t = harbor::read_trial(d);
    if (!t) return t.err();
    for (const auto& why : t->unreadable)
      run.warnings.push_back({warning_kind::unreadable_trajectory, d.string(),
                              fmt::format("{}: unreadable ({}); skipped, what it holds is not counted", d.string(), why)});
    trial_reading reading{*t, run.dir, run.warnings, {}, {}};
    reading.base.model = model_label(*t);
    reading.base.exp_dir = run.dir;
    reading.base.trajectory = t->name;
    reading.base.language = "cuda";
    if (t->summary) {
      reading.base.definition = t->summary->task;
      reading.base.target = t->summary->target;
      reading.base.variant = t->summary->variant;
      reading.base.arch = t->summary->arch;
    }
    if (auto st = reading.read_steps(); !st) return st.err();
    if (auto st = reading.read_final(); !st) return st.err();
    auto& out = reading.out;
    out.id = t->name;
    out.file = d.string();
    out.run_on_gpu = true;  // the service ran the GPU stages
    out.evaluator = reading.fake ? "fake" : "service";
    // Every turn carries the trial's task, target and arch, also a turn without a verdict (no kernel).
    std::string arch;
    for (const auto& r : out.turns)
      if (arch.empty()) arch = r.arch;
    for (auto& r : out.turns) {
      r.definition = reading.base.definition;
      r.target = reading.base.target;
      if (r.arch.empty()) r.arch = arch;
    }
    run.trajectories.push_back(std::move(out));
  }
  const bool any_turn = std::any_of(run.trajectories.begin(), run.trajectories.end(),
                                    [](const trajectory& t) { return !t.turns.empty(); });
  if (!any_turn)
    return make_error(fmt::format("{}: none of its {} Harbor trials has an evaluation (no verifier result, no verdict "
                                  "in an ATIF trajectory)",
                                  dir.string(), dirs->size()));
  return run;
}

}  // namespace ptxbench::metrics
