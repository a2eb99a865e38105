#include "adapt/kernelgen.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "adapt/mined_row.h"
#include "adapt/run_dir.h"
#include "adapt/staged_dir.h"
#include "adapt/stratified_cap.h"
#include "core/sha256.h"
#include "core/jsonl_file.h"
#include "suite/trace.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

result<ordered_json> collect_kernels(const kernelgen_options& o, const fs::path& out) {
  auto staged = staged_dir::create(out);
  if (!staged) return staged.err();
  std::map<std::string, int> dropped;
  ordered_json inputs = ordered_json::array();
  std::vector<kernel_row> kept;
  std::set<std::string> run_names, seen;
  int turns_read = 0, correct_turns = 0;
  for (const auto& dir : o.run_dirs) {
    auto run = read_run_directory(dir);
    if (!run) return run.err();
    std::string name = run->name;
    for (int i = 2; run_names.count(name); ++i) name = fmt::format("{}-{}", run->name, i);
    run_names.insert(name);
    inputs.push_back({{"run_dir", run->dir}, {"plan_sha256", run->plan_sha256}, {"model", run->plan.value("model", "")},
                      {"evaluator", run->plan.value("evaluator", "")}, {"run_on_gpu", run->plan.value("run_on_gpu", true)}});
    for (const auto& rt : run->trajectories) {
      if (!rt.t) continue;
      const auto& t = *rt.t;
      auto meta = t.meta();
      const auto& msgs = t.json()["messages"];
      std::vector<kernel_row> found;
      for (int k = 0; k < t.completed_turns(); ++k) {
        ++turns_read;
        const auto& p = turn_extra(t, k);
        if (parse_outcome(p.value("label", "")) != eval_outcome::passed) continue;
        ++correct_turns;
        if (!keeps(o.tasks, meta.task)) { dropped["task_filter"] += 1; continue; }
        if (!keeps(o.variants, meta.variant)) { dropped["variant_filter"] += 1; continue; }
        kernel_row r;
        r.target_correct = p.value("target_correct", false) && p.value("target_verdict", "") == "executed";
        if (p.contains("speedup") && p["speedup"].is_number()) r.speedup = p["speedup"].get<double>();
        if (o.require_target && !r.target_correct) { dropped["not_target_correct"] += 1; continue; }
        if (o.speedup_above && (!r.speedup || *r.speedup <= *o.speedup_above)) { dropped["speedup_not_above"] += 1; continue; }
        if (!p.contains("kernel_source") || !p["kernel_source"].is_string() || !p.contains("verdict") || !p["verdict"].is_object())
          return make_error(fmt::format("{}: turn {} is labelled passed but has no kernel_source or verdict", rt.file, k));
        r.id = fmt::format("{}__{}__turn{}", name, fs::path(rt.file).stem().string(), k);
        r.task = meta.task;
        r.target = meta.target;
        r.arch = meta.arch;
        r.variant = meta.variant;
        r.model = meta.model;
        r.trajectory = rt.file;
        r.turn = k;
        r.kernel = p["kernel_source"].get<std::string>();
        r.reply = msgs[2 + 2 * k].value("content", "");
        r.verdict = p["verdict"];
        r.system_prompt = msgs[0].value("content", "");
        r.task_prompt = msgs[1].value("content", "");
        found.push_back(std::move(r));
      }
      if (o.select != pair_select::all && found.size() > 1) {
        std::size_t pick = 0;
        if (o.select == pair_select::best)
          for (std::size_t i = 1; i < found.size(); ++i)
            if (found[i].speedup.value_or(-1) > found[pick].speedup.value_or(-1)) pick = i;
        dropped["not_selected"] += static_cast<int>(found.size()) - 1;
        found = {found[pick]};
      }
      for (auto& r : found) {
        if (o.dedupe && !seen.insert(sha256_builder().update(r.task).update(r.kernel).hex_digest()).second) {
          dropped["duplicate_kernel"] += 1;
          continue;
        }
        kept.push_back(std::move(r));
      }
    }
  }
  std::vector<strat_item> items;
  for (std::size_t i = 0; i < kept.size(); ++i)
    items.push_back({kept[i].task, fmt::format("turn{}", kept[i].turn), fmt::format("{:06d}", kept[i].turn),
                     fmt::format("{:09d}", i), kept[i].id});
  cap_options cap = o.cap;
  cap.allow_underfilled = true;  // not upstream's cap: "at most N"
  auto selection = stratified_cap(items, cap);
  if (!selection) return selection.err();
  if (kept.size() > selection->selected.size())
    dropped["cap"] += static_cast<int>(kept.size() - selection->selected.size());
  if (selection->selected.empty())
    return make_error(fmt::format("no correct kernel: {} turns read, {} correct, none kept", turns_read, correct_turns));
  std::string lines;
  std::map<std::string, int> per_definition;
  for (std::size_t i : selection->selected) {
    const auto& r = kept[i];
    std::string base = "files/" + r.id + "/";
    auto hk = staged->write(base + "kernel.cu", r.kernel);
    auto hr = staged->write(base + "reply.md", r.reply);
    auto hv = staged->write(base + "verdict.json", dump_pretty(r.verdict) + "\n");
    auto sys = staged->write_deduplicated("prompts", r.system_prompt, ".txt");
    auto task = staged->write_deduplicated("prompts", r.task_prompt, ".txt");
    for (const auto* w : {&hk, &hr, &hv, &sys, &task})
      if (!*w) return w->err();
    ordered_json row = {{"id", r.id}, {"task", r.task}, {"target", r.target}, {"arch", r.arch}, {"variant", r.variant},
                        {"model", r.model}, {"trajectory", r.trajectory}, {"turn", r.turn},
                        {"system_prompt_file", *sys}, {"task_prompt_file", *task},
                        {"kernel_file", base + "kernel.cu"}, {"kernel_sha256", *hk},
                        {"reply_file", base + "reply.md"}, {"reply_sha256", *hr},
                        {"verdict_file", base + "verdict.json"}, {"verdict_sha256", *hv},
                        {"target_correct", r.target_correct},
                        {"speedup", r.speedup ? ordered_json(*r.speedup) : ordered_json(nullptr)}};
    lines += row.dump() + "\n";
    per_definition[r.task] += 1;
  }
  if (auto w = staged->write("kernels.jsonl", lines); !w) return w.err();
  ordered_json d = ordered_json::object(), per = ordered_json::object();
  for (const auto& [k, v] : dropped) d[k] = v;
  for (const auto& [k, v] : per_definition) per[k] = v;
  ordered_json manifest = {
      {"format", k_kernelgen_format}, {"created", utc_timestamp()}, {"ptxbench_version", PTXBENCH_VERSION},
      {"argv", o.argv}, {"inputs", inputs},
      {"options", {{"require_target", o.require_target},
                   {"speedup_above", o.speedup_above ? ordered_json(*o.speedup_above) : ordered_json(nullptr)},
                   {"select", pair_select_name(o.select)}, {"variants", o.variants}, {"tasks", o.tasks},
                   {"dedupe", o.dedupe},
                   {"cap_per_definition", o.cap.cap >= 0 ? ordered_json(o.cap.cap) : ordered_json(nullptr)},
                   {"seed", o.cap.seed ? ordered_json(*o.cap.seed) : ordered_json(nullptr)}}},
      {"counts", {{"turns_read", turns_read}, {"correct_turns", correct_turns}, {"kernels", selection->selected.size()},
                  {"dropped", d}, {"per_definition", per}}}};
  if (auto c = staged->commit(manifest); !c) return c.err();
  return manifest;
}

result<std::vector<kernel_row>> load_kernels(const fs::path& dir) {
  auto staged = read_staged_rows(dir, k_kernelgen_format, "`ptxbench kernelgen collect`", "kernels.jsonl");
  if (!staged) return staged.err();
  std::vector<kernel_row> rows;
  std::size_t n = 0;
  for (const auto& j : staged->rows) {
    ++n;
    std::string where = fmt::format("{}:{}", (dir / "kernels.jsonl").string(), n);
    json_errors errs;
    kernel_row r;
    r.json = j;
    r.id = get_string(j, "id", "", errs).value_or("");
    r.task = get_string(j, "task", "", errs).value_or("");
    r.target = get_string(j, "target", "", errs).value_or("");
    r.arch = get_string(j, "arch", "", errs).value_or("");
    r.variant = get_string(j, "variant", "", errs).value_or("");
    r.model = get_string(j, "model", "", errs, false, false).value_or("");
    r.trajectory = get_string(j, "trajectory", "", errs).value_or("");
    r.turn = static_cast<int>(get_int(j, "turn", "", errs).value_or(0));
    if (!errs.empty()) return errs.to_error().with_context(where);
    std::string what = fmt::format("kernel {}", r.id), verdict_text;
    auto file = [&](const char* key, const char* hash_key, std::string& into) -> status {
      auto text = read_listed_file(dir, j, "", key, hash_key, what, where, errs);
      if (!text) return text.err();
      into = std::move(*text);
      return ok();
    };
    for (auto st : {file("system_prompt_file", nullptr, r.system_prompt), file("task_prompt_file", nullptr, r.task_prompt),
                    file("kernel_file", "kernel_sha256", r.kernel), file("reply_file", "reply_sha256", r.reply),
                    file("verdict_file", "verdict_sha256", verdict_text)})
      if (!st) return st.err();
    auto verdict = parse_json(verdict_text, what + " verdict");
    if (!verdict) return verdict.err();
    r.verdict = std::move(*verdict);
    r.target_correct = j.value("target_correct", false);
    if (j.contains("speedup") && j["speedup"].is_number()) r.speedup = j["speedup"].get<double>();
    rows.push_back(std::move(r));
  }
  if (rows.empty()) return make_error(fmt::format("{}: no kernels", (dir / "kernels.jsonl").string()));
  return rows;
}

}  // namespace ptxbench::adapt
