#include "adapt/mine.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "adapt/run_dir.h"
#include "adapt/staged_dir.h"
#include "adapt/stratified_cap.h"
#include "core/sha256.h"
#include "suite/trace.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

result<std::vector<int>> parse_turn_list(const std::string& spec) {
  std::set<int> turns;
  std::stringstream ss(spec);
  std::string part;
  auto number = [](const std::string& s) -> std::optional<int> {
    if (s.empty() || s.size() > 6 || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return std::stoi(s);
  };
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    auto dash = part.find('-');
    auto a = number(part.substr(0, dash));
    auto b = dash == std::string::npos ? a : number(part.substr(dash + 1));
    if (!a || !b || *b < *a) return make_error(fmt::format("turn list '{}': expected turns such as 0-4,6", spec));
    for (int t = *a; t <= *b; ++t) turns.insert(t);
  }
  if (turns.empty()) return make_error(fmt::format("turn list '{}' selects no turn", spec));
  return std::vector<int>(turns.begin(), turns.end());
}

bool ends_with_closing_fence(const std::string& reply) {
  auto end = reply.find_last_not_of(" \t\r\n\f\v");
  return end != std::string::npos && end >= 2 && reply.compare(end - 2, 3, "```") == 0;
}

namespace {

std::string unique_run_name(const std::string& name, std::set<std::string>& used) {
  std::string n = name;
  for (int i = 2; used.count(n); ++i) n = fmt::format("{}-{}", name, i);
  used.insert(n);
  return n;
}

}  // namespace

result<mine_candidates> collect_failures(const mine_options& o) {
  mine_candidates out;
  std::set<std::string> run_names, seen_kernels;
  auto exclude = [&](const std::string& why) { out.excluded[why] += 1; };
  for (const auto& dir : o.run_dirs) {
    auto run = read_run_directory(dir);
    if (!run) return run.err();
    std::string run_name = unique_run_name(run->name, run_names);
    ordered_json hashes = ordered_json::object();
    for (const auto& rt : run->trajectories) {
      if (!rt.t) {
        ++out.trajectories_not_started;
        continue;
      }
      ++out.trajectories_read;
      hashes[rt.file] = rt.sha256;
      const auto& t = *rt.t;
      auto meta = t.meta();
      const auto& msgs = t.json()["messages"];
      std::string stem = fs::path(rt.file).stem().string();
      for (int k = 0; k < t.completed_turns(); ++k) {
        ++out.turns_read;
        const auto& p = turn_extra(t, k);
        std::string where = fmt::format("{}: messages[{}]", rt.file, 3 + 2 * k);
        if (!p.contains("label") || !p["label"].is_string())
          return make_error(where + ": extra.ptxbench.label is missing (not a PTXBench trajectory?)");
        auto label = parse_outcome(p["label"].get<std::string>());
        if (!label) return make_error(fmt::format("{}: unknown label '{}'", where, p["label"].get<std::string>()));
        auto type = error_type_of(*label);
        if (!type || (!upstream_mines(*label) && !o.include_shape_dtype)) {
          exclude(fmt::format("label:{}", outcome_name(*label)));
          continue;
        }
        if (!keeps(o.tasks, meta.task)) { exclude("task_filter"); continue; }
        if (!keeps(o.known_tasks, meta.task))
          return make_error(fmt::format("{}: task '{}' is not in this suite (a run of another suite?); --tasks keeps only "
                                        "the tasks to mine",
                                        rt.file, meta.task));
        if (!keeps(o.variants, meta.variant)) { exclude("variant_filter"); continue; }
        if (!keeps(o.turns, k)) { exclude("turn_filter"); continue; }
        if (!p.contains("kernel_source") || !p["kernel_source"].is_string())
          return make_error(where + ": a failed turn without extra.ptxbench.kernel_source");
        mined_row r;
        r.reply = msgs[2 + 2 * k].value("content", "");
        if (!o.allow_non_fenced && !ends_with_closing_fence(r.reply)) { exclude("reply_not_ending_with_fence"); continue; }
        r.kernel = p["kernel_source"].get<std::string>();
        if (o.dedupe_kernels) {
          std::string dedup_key = sha256_builder().update(meta.task).update(meta.variant).update(r.kernel).hex_digest();
          if (!seen_kernels.insert(dedup_key).second) { exclude("duplicate_kernel"); continue; }
        }
        r.id = fmt::format("{}__{}__turn{}", run_name, stem, k);
        r.run_dir = run->dir;
        r.trajectory = rt.file;
        r.model = meta.model;
        r.task = meta.task;
        r.target = meta.target;
        r.arch = meta.arch;
        r.variant = meta.variant;
        r.trajectory_index = meta.trajectory_index;
        r.plan_index = rt.plan_item.value("index", 0);
        r.turn = k;
        r.label = *label;
        r.type = *type;
        if (p.contains("verdict") && p["verdict"].is_object()) r.verdict_message = p["verdict"].value("message", "");
        r.feedback = msgs[3 + 2 * k].value("content", "");
        r.error_log = error_log_of(msgs[3 + 2 * k]);
        r.system_prompt = msgs[0].value("content", "");
        r.task_prompt = msgs[1].value("content", "");
        out.rows.push_back(std::move(r));
      }
    }
    out.inputs.push_back({{"run_dir", run->dir},
                          {"name", run_name},
                          {"plan_sha256", run->plan_sha256},
                          {"model", run->plan.value("model", "")},
                          {"evaluator", run->plan.value("evaluator", "")},
                          {"run_on_gpu", run->plan.value("run_on_gpu", true)},
                          {"trajectories", hashes}});
  }
  return out;
}

result<ordered_json> mine_failures(const mine_options& o, const fs::path& out) {
  auto staged = staged_dir::create(out);  // refuse an existing --out before reading anything
  if (!staged) return staged.err();
  auto cands = collect_failures(o);
  if (!cands) return cands.err();
  std::vector<strat_item> items;
  for (const auto& r : cands->rows)
    items.push_back({r.task, r.stratum(), r.stratum_sort(),
                     fmt::format("{:06d}\x1f{:09d}\x1f{}", r.turn, r.plan_index, r.run_dir), r.id});
  auto selection = stratified_cap(items, o.cap);
  if (!selection) return selection.err();
  if (selection->selected.empty()) {
    std::string why;
    for (const auto& [k, v] : cands->excluded) why += fmt::format("{}{} {}", why.empty() ? "" : ", ", v, k);
    return make_error(fmt::format("no failed turn to mine: {} turns read in {} trajectories{}", cands->turns_read,
                                  cands->trajectories_read, why.empty() ? "" : " (left out: " + why + ")"));
  }
  std::string lines;
  std::map<std::string, std::pair<int, int>> per_type, per_definition;
  for (const auto& r : cands->rows) {
    per_type[error_type_name(r.type)].first += 1;
    per_definition[r.task].first += 1;
  }
  for (std::size_t i : selection->selected) {
    const mined_row& r = cands->rows[i];
    per_type[error_type_name(r.type)].second += 1;
    per_definition[r.task].second += 1;
    mined_files f;
    std::string base = "files/" + r.id + "/";
    auto w = [&](const std::string& rel, const std::string& content, std::string& path, std::string& hash) -> status {
      auto h = staged->write(rel, content);
      if (!h) return h.err();
      path = rel;
      hash = *h;
      return ok();
    };
    for (auto st : {w(base + "wrong.cu", r.kernel, f.kernel_file, f.kernel_sha256),
                    w(base + "log.txt", r.error_log, f.log_file, f.log_sha256),
                    w(base + "reply.md", r.reply, f.reply_file, f.reply_sha256),
                    w(base + "feedback.txt", r.feedback, f.feedback_file, f.feedback_sha256)})
      if (!st) return st.err();
    auto sys = staged->write_deduplicated("prompts", r.system_prompt, ".txt");
    auto task = staged->write_deduplicated("prompts", r.task_prompt, ".txt");
    if (!sys) return sys.err();
    if (!task) return task.err();
    f.system_prompt_file = *sys;
    f.task_prompt_file = *task;
    lines += mined_row_json(r, f).dump() + "\n";
  }
  if (auto w = staged->write("mined.jsonl", lines); !w) return w.err();
  ordered_json strata = ordered_json::object();
  for (const auto& [group, by] : selection->strata) {
    ordered_json g = ordered_json::object();
    for (const auto& [name, c] : by) g[name] = {{"candidates", c.candidates}, {"selected", c.selected}};
    strata[group] = g;
  }
  auto pairs_json = [](const std::map<std::string, std::pair<int, int>>& m) {
    ordered_json j = ordered_json::object();
    for (const auto& [k, v] : m) j[k] = {{"candidates", v.first}, {"selected", v.second}};
    return j;
  };
  ordered_json excluded = ordered_json::object();
  for (const auto& [k, v] : cands->excluded) excluded[k] = v;
  ordered_json manifest = {
      {"format", k_mined_format},
      {"created", utc_timestamp()},
      {"ptxbench_version", PTXBENCH_VERSION},
      {"argv", o.argv},
      {"inputs", cands->inputs},
      {"options", {{"cap_per_definition", o.cap.cap >= 0 ? ordered_json(o.cap.cap) : ordered_json(nullptr)},
                   {"cap_rule", cap_rule_name(o.cap.rule)},
                   {"seed", o.cap.seed ? ordered_json(*o.cap.seed) : ordered_json(nullptr)},
                   {"allow_underfilled_definitions", o.cap.allow_underfilled},
                   {"variants", o.variants},
                   {"turns", o.turns},
                   {"tasks", o.tasks},
                   {"allow_non_fenced_turns", o.allow_non_fenced},
                   {"include_shape_dtype", o.include_shape_dtype},
                   {"dedupe_kernels", o.dedupe_kernels}}},
      {"counts", {{"trajectories_read", cands->trajectories_read},
                  {"trajectories_not_started", cands->trajectories_not_started},
                  {"turns_read", cands->turns_read},
                  {"excluded", excluded},
                  {"candidates", cands->rows.size()},
                  {"selected", selection->selected.size()},
                  {"per_definition", pairs_json(per_definition)},
                  {"per_error_type", pairs_json(per_type)},
                  {"per_stratum", strata},
                  {"underfilled_definitions", selection->underfilled}}}};
  if (auto c = staged->commit(manifest); !c) return c.err();
  return manifest;
}

}  // namespace ptxbench::adapt
