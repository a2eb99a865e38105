#include "adapt/pairs.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "adapt/mined_row.h"
#include "adapt/repair.h"
#include "adapt/run_dir.h"
#include "adapt/staged_dir.h"
#include "adapt/stratified_cap.h"
#include "core/sha256.h"
#include "core/jsonl_file.h"
#include "suite/trace.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

std::optional<pair_select> parse_pair_select(const std::string& s) {
  if (s == "all") return pair_select::all;
  if (s == "first") return pair_select::first;
  if (s == "best") return pair_select::best;
  return std::nullopt;
}

std::string pair_select_name(pair_select s) {
  switch (s) {
    case pair_select::all: return "all";
    case pair_select::first: return "first";
    case pair_select::best: return "best";
  }
  return "all";
}

namespace {

struct candidate {
  const mined_row* wrong = nullptr;
  std::string repair_trajectory, teacher;
  int turn = 0;
  std::string kernel, reply, repair_system, repair_prompt;
  ordered_json extra;  // the repair turn's extra.ptxbench
  std::optional<double> speedup;
  std::string id;
};

struct loaded_mined {
  std::string dir, sha256;
  std::vector<mined_row> rows;
  std::map<std::string, const mined_row*> by_id;
};

result<const loaded_mined*> mined_for(const std::string& dir, std::map<std::string, loaded_mined>& cache) {
  if (auto it = cache.find(dir); it != cache.end()) return &it->second;
  auto rows = load_mined(dir);
  if (!rows) return rows.err();
  auto manifest = read_manifest(dir, k_mined_format, "`ptxbench fixit mine`");
  if (!manifest) return manifest.err();
  loaded_mined m;
  m.dir = dir;
  m.sha256 = (*manifest)["files"].value("mined.jsonl", "");
  m.rows = std::move(*rows);
  auto& slot = cache[dir] = std::move(m);
  for (const auto& r : slot.rows) slot.by_id[r.id] = &r;
  return &slot;
}

}  // namespace

result<ordered_json> collect_pairs(const pairs_options& o, const fs::path& out) {
  auto staged = staged_dir::create(out);
  if (!staged) return staged.err();
  std::map<std::string, loaded_mined> mined_cache;
  std::map<std::string, int> dropped;
  int repairs = 0, repairs_unfinished = 0, repair_turns = 0, correct_turns = 0;
  ordered_json inputs = ordered_json::array();
  std::vector<candidate> kept;
  for (const auto& dir : o.repair_dirs) {
    auto run = read_run_directory(dir);
    if (!run) return run.err();
    const auto& fixit = run->plan.contains("fixit") ? run->plan["fixit"] : ordered_json();
    if (!fixit.is_object() || fixit.value("format", "") != k_repair_format)
      return make_error(fmt::format("{}: not a `ptxbench fixit repair` directory (plan.json has no fixit block)", dir.string()));
    std::string mined_dir = o.mined_dir.empty() ? fixit.value("mined_dir", "") : o.mined_dir.string();
    auto mined = mined_for(mined_dir, mined_cache);
    if (!mined) return mined.err().with_context(fmt::format("{} (its mined rows)", dir.string()));
    if ((*mined)->sha256 != fixit.value("mined_sha256", ""))
      return make_error(fmt::format("{}: the mined rows in {} are not the ones these repairs were planned from "
                                    "(mined.jsonl's sha256 differs)", dir.string(), mined_dir));
    inputs.push_back({{"repair_dir", run->dir}, {"plan_sha256", run->plan_sha256}, {"model", run->plan.value("model", "")},
                      {"evaluator", run->plan.value("evaluator", "")}, {"run_on_gpu", run->plan.value("run_on_gpu", true)},
                      {"mined_dir", mined_dir}, {"mined_sha256", (*mined)->sha256}});
    for (const auto& rt : run->trajectories) {
      ++repairs;
      std::string mined_id = rt.plan_item.contains("source") ? rt.plan_item["source"].value("mined_id", "") : "";
      auto it = (*mined)->by_id.find(mined_id);
      if (it == (*mined)->by_id.end())
        return make_error(fmt::format("{}: plan item {} names mined row '{}', which {} does not have", dir.string(),
                                      rt.plan_item.value("index", -1), mined_id, mined_dir));
      if (!rt.t) {
        ++repairs_unfinished;
        continue;
      }
      if (!rt.t->finished(rt.t->meta().turn_limit)) ++repairs_unfinished;
      std::vector<candidate> found;
      const auto& msgs = rt.t->json()["messages"];
      for (int k = 0; k < rt.t->completed_turns(); ++k) {
        ++repair_turns;
        const auto& p = turn_extra(*rt.t, k);
        if (parse_outcome(p.value("label", "")) != eval_outcome::passed) continue;
        ++correct_turns;
        candidate c;
        c.wrong = it->second;
        c.repair_trajectory = rt.file;
        c.teacher = rt.t->meta().model;
        c.turn = k;
        c.extra = p;
        if (p.contains("speedup") && p["speedup"].is_number()) c.speedup = p["speedup"].get<double>();
        if (o.require_target && !(p.value("target_correct", false) && p.value("target_verdict", "") == "executed")) {
          dropped["not_target_correct"] += 1;
          continue;
        }
        if (o.min_speedup && (!c.speedup || *c.speedup < *o.min_speedup)) {
          dropped["below_min_speedup"] += 1;
          continue;
        }
        if (!p.contains("kernel_source") || !p["kernel_source"].is_string() || !p.contains("verdict") ||
            !p["verdict"].is_object())
          return make_error(fmt::format("{}: turn {} is labelled passed but has no kernel_source or verdict", rt.file, k));
        c.kernel = p["kernel_source"].get<std::string>();
        c.reply = msgs[2 + 2 * k].value("content", "");
        c.repair_system = msgs[0].value("content", "");
        c.repair_prompt = msgs[1].value("content", "");
        c.id = fmt::format("{}__r{}", mined_id, k);
        found.push_back(std::move(c));
      }
      if (o.select != pair_select::all && found.size() > 1) {
        std::size_t pick = 0;
        if (o.select == pair_select::best)
          for (std::size_t i = 1; i < found.size(); ++i)
            if (found[i].speedup.value_or(-1) > found[pick].speedup.value_or(-1)) pick = i;
        dropped["not_selected"] += static_cast<int>(found.size()) - 1;
        found = {found[pick]};
      }
      for (auto& c : found) kept.push_back(std::move(c));
    }
  }
  // On request, one pair per (task, wrong kernel, correct kernel), the first in input order.
  std::vector<candidate> unique;
  if (o.dedupe) {
    std::set<std::string> seen;
    for (auto& c : kept) {
      if (!seen.insert(sha256_builder().update(c.wrong->task).update(c.wrong->kernel).update(c.kernel).hex_digest()).second) {
        dropped["duplicate"] += 1;
        continue;
      }
      unique.push_back(std::move(c));
    }
  } else {
    unique = std::move(kept);
  }
  std::vector<strat_item> items;
  for (std::size_t i = 0; i < unique.size(); ++i)
    items.push_back({unique[i].wrong->task, unique[i].wrong->stratum(), unique[i].wrong->stratum_sort(),
                     fmt::format("{:09d}", i), unique[i].id});
  cap_options cap = o.cap;
  cap.allow_underfilled = true;  // post-balancing: "at most N"
  auto selection = stratified_cap(items, cap);
  if (!selection) return selection.err();
  if (unique.size() > selection->selected.size())
    dropped["post_balancing_cap"] += static_cast<int>(unique.size() - selection->selected.size());
  if (selection->selected.empty())
    return make_error(fmt::format("no pair: {} repair trajectories with {} turns, {} of them correct, none kept "
                                  "(see --no-require-target / --min-speedup)", repairs, repair_turns, correct_turns));
  std::string lines;
  std::map<std::string, int> per_definition, per_type;
  for (std::size_t i : selection->selected) {
    const candidate& c = unique[i];
    const mined_row& w = *c.wrong;
    std::string base = "files/" + c.id + "/";
    std::map<std::string, std::string> hash;
    for (const auto& [name, content] : std::vector<std::pair<std::string, std::string>>{
             {"wrong.cu", w.kernel}, {"wrong_log.txt", w.error_log}, {"wrong_reply.md", w.reply},
             {"wrong_feedback.txt", w.feedback}, {"correct.cu", c.kernel}, {"correct_reply.md", c.reply},
             {"correct_verdict.json", dump_pretty(c.extra["verdict"]) + "\n"}}) {
      auto h = staged->write(base + name, content);
      if (!h) return h.err();
      hash[name] = *h;
    }
    auto sys = staged->write_deduplicated("prompts", w.system_prompt, ".txt");
    auto task = staged->write_deduplicated("prompts", w.task_prompt, ".txt");
    auto repair_sys = staged->write_deduplicated("prompts", c.repair_system, ".txt");
    auto repair_prompt = staged->write_deduplicated("prompts", c.repair_prompt, ".txt");
    for (const auto* f : {&sys, &task, &repair_sys, &repair_prompt})
      if (!*f) return f->err();
    const auto& p = c.extra;
    ordered_json row = {
        {"id", c.id},
        {"task", w.task},
        {"target", w.target},
        {"arch", w.arch},
        {"variant", w.variant},
        {"error_type", error_type_name(w.type)},
        {"label", std::string(outcome_name(w.label))},
        {"system_prompt_file", *sys},
        {"task_prompt_file", *task},
        {"repair_system_prompt_file", *repair_sys},
        {"repair_prompt_file", *repair_prompt},
        {"wrong", {{"mined_id", w.id}, {"model", w.model}, {"trajectory", w.trajectory}, {"turn", w.turn},
                   {"kernel_file", base + "wrong.cu"}, {"kernel_sha256", hash["wrong.cu"]},
                   {"log_file", base + "wrong_log.txt"}, {"log_sha256", hash["wrong_log.txt"]},
                   {"reply_file", base + "wrong_reply.md"}, {"reply_sha256", hash["wrong_reply.md"]},
                   {"feedback_file", base + "wrong_feedback.txt"}, {"feedback_sha256", hash["wrong_feedback.txt"]}}},
        {"correct", {{"model", c.teacher}, {"trajectory", c.repair_trajectory}, {"turn", c.turn},
                     {"kernel_file", base + "correct.cu"}, {"kernel_sha256", hash["correct.cu"]},
                     {"reply_file", base + "correct_reply.md"}, {"reply_sha256", hash["correct_reply.md"]},
                     {"verdict_file", base + "correct_verdict.json"}, {"verdict_sha256", hash["correct_verdict.json"]},
                     {"label", "passed"},
                     {"target_correct", p.value("target_correct", false)},
                     {"target_verdict", p.contains("target_verdict") ? p["target_verdict"] : ordered_json(nullptr)},
                     {"speedup", c.speedup ? ordered_json(*c.speedup) : ordered_json(nullptr)},
                     {"dynamic_counts", p.contains("dynamic_counts") ? p["dynamic_counts"] : ordered_json(nullptr)}}}};
    lines += row.dump() + "\n";
    per_definition[w.task] += 1;
    per_type[error_type_name(w.type)] += 1;
  }
  if (auto w = staged->write("pairs.jsonl", lines); !w) return w.err();
  auto map_json = [](const std::map<std::string, int>& m) {
    ordered_json j = ordered_json::object();
    for (const auto& [k, v] : m) j[k] = v;
    return j;
  };
  ordered_json manifest = {
      {"format", k_pairs_format},
      {"created", utc_timestamp()},
      {"ptxbench_version", PTXBENCH_VERSION},
      {"argv", o.argv},
      {"inputs", inputs},
      {"options", {{"require_target", o.require_target},
                   {"min_speedup", o.min_speedup ? ordered_json(*o.min_speedup) : ordered_json(nullptr)},
                   {"select", pair_select_name(o.select)},
                   {"dedupe", o.dedupe},
                   {"cap_per_definition", o.cap.cap >= 0 ? ordered_json(o.cap.cap) : ordered_json(nullptr)},
                   {"cap_rule", cap_rule_name(o.cap.rule)},
                   {"seed", o.cap.seed ? ordered_json(*o.cap.seed) : ordered_json(nullptr)}}},
      {"counts", {{"repairs", repairs}, {"repairs_unfinished", repairs_unfinished}, {"repair_turns", repair_turns},
                  {"correct_turns", correct_turns}, {"pairs", selection->selected.size()}, {"dropped", map_json(dropped)},
                  {"per_definition", map_json(per_definition)}, {"per_error_type", map_json(per_type)}}}};
  if (auto c = staged->commit(manifest); !c) return c.err();
  return manifest;
}

result<std::vector<pair_row>> load_pairs(const fs::path& dir) {
  auto staged = read_staged_rows(dir, k_pairs_format, "`ptxbench fixit pairs`", "pairs.jsonl");
  if (!staged) return staged.err();
  std::vector<pair_row> rows;
  std::set<std::string> ids;
  std::size_t n = 0;
  for (const auto& j : staged->rows) {
    ++n;
    std::string where = fmt::format("{}:{}", (dir / "pairs.jsonl").string(), n);
    json_errors errs;
    pair_row r;
    r.json = j;
    r.id = get_string(j, "id", "", errs).value_or("");
    r.task = get_string(j, "task", "", errs).value_or("");
    r.target = get_string(j, "target", "", errs).value_or("");
    r.arch = get_string(j, "arch", "", errs).value_or("");
    r.variant = get_string(j, "variant", "", errs).value_or("");
    r.label = get_string(j, "label", "", errs).value_or("");
    auto type = get_string(j, "error_type", "", errs);
    if (j.contains("wrong")) expect_object(j["wrong"], "wrong", errs); else errs.add("wrong", "missing required field");
    if (j.contains("correct")) expect_object(j["correct"], "correct", errs); else errs.add("correct", "missing required field");
    if (!errs.empty()) return errs.to_error().with_context(where);
    if (!ids.insert(r.id).second) return make_error(fmt::format("{}: pair id '{}' appears twice", where, r.id));
    auto parsed = parse_error_type(*type);
    if (!parsed) return make_error(fmt::format("{}: unknown error_type '{}'", where, *type));
    r.type = *parsed;
    const auto& w = j["wrong"];
    const auto& c = j["correct"];
    std::string what = fmt::format("pair {}", r.id);
    auto file = [&](const ordered_json& obj, const std::string& path, const char* key, const char* hash_key,
                    std::string& into) -> status {
      auto text = read_listed_file(dir, obj, path, key, hash_key, what, where, errs);
      if (!text) return text.err();
      into = std::move(*text);
      return ok();
    };
    std::string verdict_text;
    for (auto st : {file(j, "", "system_prompt_file", nullptr, r.system_prompt),
                    file(j, "", "task_prompt_file", nullptr, r.task_prompt),
                    file(w, "wrong", "kernel_file", "kernel_sha256", r.wrong.kernel),
                    file(w, "wrong", "log_file", "log_sha256", r.wrong.log),
                    file(w, "wrong", "reply_file", "reply_sha256", r.wrong.reply),
                    file(w, "wrong", "feedback_file", "feedback_sha256", r.wrong.feedback),
                    file(c, "correct", "kernel_file", "kernel_sha256", r.correct.kernel),
                    file(c, "correct", "reply_file", "reply_sha256", r.correct.reply),
                    file(c, "correct", "verdict_file", "verdict_sha256", verdict_text)})
      if (!st) return st.err();
    using optional_file = std::pair<const char*, std::string*>;
    for (const optional_file& f : {optional_file{"repair_system_prompt_file", &r.repair_system_prompt},
                                   optional_file{"repair_prompt_file", &r.repair_prompt}})
      if (j.contains(f.first))
        if (auto st = file(j, "", f.first, nullptr, *f.second); !st) return st.err();
    r.wrong.mined_id = w.value("mined_id", "");
    r.wrong.model = w.value("model", "");
    r.wrong.trajectory = w.value("trajectory", "");
    r.wrong.turn = w.value("turn", 0);
    r.correct.model = c.value("model", "");
    r.correct.trajectory = c.value("trajectory", "");
    r.correct.turn = c.value("turn", 0);
    r.correct.target_correct = c.value("target_correct", false);
    r.correct.target_verdict = c.contains("target_verdict") && c["target_verdict"].is_string() ? c["target_verdict"].get<std::string>() : "";
    if (c.contains("speedup") && c["speedup"].is_number()) r.correct.speedup = c["speedup"].get<double>();
    auto verdict = parse_json(verdict_text, what + " verdict");
    if (!verdict) return verdict.err();
    r.correct.verdict = std::move(*verdict);
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return make_error(fmt::format("{}: no pairs", (dir / "pairs.jsonl").string()));
  return rows;
}

}  // namespace ptxbench::adapt
