#include "agent/summary.h"

#include <map>

#include "agent/trajectory.h"
#include "suite/trace.h"

namespace ptxbench::agent {
namespace {

struct tally {
  int planned = 0, not_started = 0, finished = 0, submitted = 0, limits_exceeded = 0, context_exceeded = 0;
  int resumable = 0, correct = 0, target_correct = 0, turns = 0, api_calls = 0, calls_without_cost = 0;
  double cost_usd = 0;
  std::map<std::string, int> labels;

  void add(const ordered_json& t) {
    ++planned;
    std::string s = t.value("exit_status", "");
    if (s == "NotStarted" || s == "Unreadable") ++not_started;
    else if (s == exit_names::submitted) ++submitted, ++finished;
    else if (s == exit_names::limits_exceeded) ++limits_exceeded, ++finished;
    else if (s == exit_names::context_exceeded) ++context_exceeded, ++finished;
    else ++resumable;
    if (t["first_correct_turn"].is_number()) ++correct;
    if (t["first_target_correct_turn"].is_number()) ++target_correct;
    turns += t.value("turns_completed", 0);
    api_calls += t.value("api_calls", 0);
    calls_without_cost += t.value("calls_without_cost", 0);
    cost_usd += t.value("cost_usd", 0.0);
    for (const auto& l : t["labels"]) labels[l.get<std::string>()] += 1;
  }

  [[nodiscard]] ordered_json json() const {
    ordered_json l = ordered_json::object();
    for (const auto& [k, v] : labels) l[k] = v;
    return {{"planned", planned}, {"finished", finished}, {"submitted", submitted},
            {"limits_exceeded", limits_exceeded}, {"context_exceeded", context_exceeded},
            {"resumable", resumable}, {"not_started", not_started},
            {"correct_trajectories", correct}, {"target_correct_trajectories", target_correct},
            {"turns_completed", turns}, {"label_counts", l}, {"api_calls", api_calls},
            {"cost_usd", cost_usd}, {"calls_without_cost", calls_without_cost}};
  }
};

}  // namespace

ordered_json summarize_trajectory(const std::filesystem::path& file) {
  ordered_json t = {{"exit_status", "NotStarted"}, {"turns_completed", 0}, {"labels", ordered_json::array()},
                    {"first_correct_turn", nullptr}, {"first_target_correct_turn", nullptr},
                    {"best_speedup", nullptr}, {"best_target_correct_speedup", nullptr},
                    {"api_calls", 0}, {"cost_usd", 0.0}, {"calls_without_cost", 0},
                    {"dropped_pairs", 0}, {"interruptions", 0}};
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return t;
  auto loaded = trajectory::load(file);
  if (!loaded) {
    t["exit_status"] = "Unreadable";
    t["error"] = loaded.err().message;
    return t;
  }
  const auto& doc = loaded->json();
  t["exit_status"] = loaded->exit_status();
  int turns = loaded->completed_turns();
  t["turns_completed"] = turns;
  std::optional<double> best, best_tc;
  for (int k = 0; k < turns; ++k) {
    const auto& extra = doc["messages"][3 + 2 * k]["extra"];
    const auto& p = extra.contains("ptxbench") ? extra["ptxbench"] : ordered_json::object();
    auto label = parse_outcome(p.value("label", ""));
    t["labels"].push_back(label ? std::string(outcome_name(*label)) : p.value("label", "unknown"));
    std::optional<double> sp;
    if (p.contains("speedup") && p["speedup"].is_number()) sp = p["speedup"].get<double>();
    if (label == eval_outcome::passed) {
      if (t["first_correct_turn"].is_null()) t["first_correct_turn"] = k;
      if (sp && (!best || *sp > *best)) best = sp;
    }
    if (p.value("target_correct", false)) {
      if (t["first_target_correct_turn"].is_null()) t["first_target_correct_turn"] = k;
      if (sp && (!best_tc || *sp > *best_tc)) best_tc = sp;
    }
  }
  if (best) t["best_speedup"] = *best;
  if (best_tc) t["best_target_correct_speedup"] = *best_tc;
  const auto& stats = doc["info"]["model_stats"];
  t["api_calls"] = stats.value("api_calls", 0);
  t["cost_usd"] = stats.value("instance_cost", 0.0);
  t["calls_without_cost"] = stats.value("calls_without_cost", 0);
  const auto& p = doc["info"]["ptxbench"];
  t["dropped_pairs"] = p.contains("dropped_pairs") ? p["dropped_pairs"].size() : 0;
  t["interruptions"] = p.contains("interruptions") ? p["interruptions"].size() : 0;
  return t;
}

ordered_json summarize_run(const std::filesystem::path& out_dir, const std::vector<plan_item>& plan, int turn_limit,
                           const std::string& stop_message) {
  tally all;
  std::map<std::string, tally> per_task, per_variant;
  ordered_json rows = ordered_json::array();
  for (const auto& item : plan) {
    ordered_json t = summarize_trajectory(out_dir / item.file);
    all.add(t);
    per_task[item.task].add(t);
    per_variant[item.variant].add(t);
    ordered_json row = {{"index", item.index}, {"task", item.task}, {"target", item.target},
                        {"variant", item.variant}, {"trajectory_index", item.trajectory_index}, {"file", item.file}};
    row.update(t);
    rows.push_back(std::move(row));
  }
  ordered_json by_task = ordered_json::object(), by_variant = ordered_json::object();
  for (const auto& [k, v] : per_task) by_task[k] = v.json();
  for (const auto& [k, v] : per_variant) by_variant[k] = v.json();
  ordered_json totals = all.json();
  totals["turns_planned_max"] = static_cast<int64_t>(plan.size()) * turn_limit;
  return {{"format", "ptxbench.run-summary/1"},
          {"updated", utc_timestamp()},
          {"complete", all.finished == all.planned},
          {"stop_reason", stop_message.empty() ? ordered_json(nullptr) : ordered_json(stop_message)},
          {"totals", totals},
          {"per_task", by_task},
          {"per_variant", by_variant},
          {"trajectories", rows}};
}

}  // namespace ptxbench::agent
