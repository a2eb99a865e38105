#include "adapt/recipe.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "adapt/run_dir.h"
#include "core/file_io.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

std::vector<std::string> list_recipes(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// Readers of the optional settings a section may hold; absent (or null) keeps the default.
struct section_reader {
  const ordered_json& s;
  std::string path;
  json_errors& errs;

  void flag(const char* key, bool& into) const {
    if (auto v = get_bool(s, key, path, errs, false)) into = *v;
  }
  void number(const char* key, std::optional<double>& into) const {
    if (!s.contains(key)) return;
    into = s[key].is_null() ? std::nullopt : get_number(s, key, path, errs);
  }
  void count(const char* key, std::size_t& into) const {
    if (auto v = get_int(s, key, path, errs, false)) {
      if (*v < 0) errs.add(json_child(path, key), "expected a non-negative integer");
      else into = static_cast<std::size_t>(*v);
    }
  }
  void cap(cap_options& into) const {
    if (s.contains("cap_per_definition") && !s["cap_per_definition"].is_null())
      into.cap = static_cast<int>(get_int(s, "cap_per_definition", path, errs).value_or(-1));
    if (auto rule = get_string(s, "cap_rule", path, errs, false)) {
      auto parsed = parse_cap_rule(*rule);
      if (!parsed) errs.add(json_child(path, "cap_rule"), "expected upstream or every-stratum");
      else into.rule = *parsed;
    }
    if (s.contains("seed") && !s["seed"].is_null())
      into.seed = static_cast<uint64_t>(get_int(s, "seed", path, errs).value_or(0));
  }
  void select(pair_select& into) const {
    if (auto v = get_string(s, "select", path, errs, false)) {
      auto parsed = parse_pair_select(*v);
      if (!parsed) errs.add(json_child(path, "select"), "expected all, first or best");
      else into = *parsed;
    }
  }
};

}  // namespace

result<recipe> load_recipe(const fs::path& dir, const std::string& name) {
  fs::path file = dir / (name + ".json");
  std::error_code ec;
  if (name.find('/') != std::string::npos || !fs::is_regular_file(file, ec)) {
    std::string list;
    for (const auto& n : list_recipes(dir)) list += (list.empty() ? "" : ", ") + n;
    return make_error(fmt::format("unknown recipe '{}' (recipes in {}: {})", name, dir.string(), list.empty() ? "none" : list));
  }
  auto text = read_text_file(file, 1u << 20);
  if (!text) return text.err();
  auto j = parse_json(*text, file.string());
  if (!j) return j.err();
  json_errors errs;
  recipe r;
  r.json = *j;
  if (!expect_object(*j, "", errs)) return errs.to_error().with_context(file.string());
  reject_unknown_keys(*j,
                      {"format", "name", "upstream_tag", "description", "row_format", "problems", "mine", "repair",
                       "pairs", "collect", "teacher_runs", "reason", "export", "paper", "interpretation"},
                      "", errs);
  if (j->value("format", "") != k_recipe_format) errs.add("format", fmt::format("expected \"{}\"", k_recipe_format));
  r.name = get_string(*j, "name", "", errs).value_or("");
  r.upstream_tag = get_string(*j, "upstream_tag", "", errs, false).value_or("");
  r.description = get_string(*j, "description", "", errs, false).value_or("");
  r.row_format = get_string(*j, "row_format", "", errs).value_or("");
  if (r.row_format != "fixit" && r.row_format != "kernelgen") errs.add("row_format", "expected fixit or kernelgen");
  auto section = [&](const char* key) -> const ordered_json& {
    static const ordered_json empty = ordered_json::object();
    if (!j->contains(key)) {
      errs.add(key, "missing required field");
      return empty;
    }
    if (!expect_object((*j)[key], key, errs)) return empty;
    return (*j)[key];
  };
  const auto& problems = section("problems");
  r.problems_name = get_string(problems, "name", "problems", errs).value_or("");
  r.tasks = get_string_list(problems, "tasks", "problems", errs).value_or(std::vector<std::string>{});
  if (r.row_format == "fixit") {
    const auto& mine = section("mine");
    reject_unknown_keys(mine, {"variants", "turns", "cap_per_definition", "cap_rule", "seed",
                               "allow_underfilled_definitions", "allow_non_fenced_turns", "include_shape_dtype",
                               "dedupe_kernels"}, "mine", errs);
    section_reader m{mine, "mine", errs};
    r.mine.variants = get_string_list(mine, "variants", "mine", errs).value_or(std::vector<std::string>{});
    if (auto t = get_string(mine, "turns", "mine", errs, false)) {
      auto turns = parse_turn_list(*t);
      if (!turns) errs.add("mine.turns", turns.err().message);
      else r.mine.turns = *turns;
    }
    m.cap(r.mine.cap);
    m.flag("allow_underfilled_definitions", r.mine.cap.allow_underfilled);
    m.flag("allow_non_fenced_turns", r.mine.allow_non_fenced);
    m.flag("include_shape_dtype", r.mine.include_shape_dtype);
    m.flag("dedupe_kernels", r.mine.dedupe_kernels);
    const auto& repair = section("repair");
    reject_unknown_keys(repair, {"model", "turns", "target_speedup"}, "repair", errs);
    r.repair_model = get_string(repair, "model", "repair", errs).value_or("");
    r.repair_turns = static_cast<int>(get_int(repair, "turns", "repair", errs).value_or(5));
    r.repair_target_speedup = get_number(repair, "target_speedup", "repair", errs).value_or(0.15);
    const auto& pairs = section("pairs");
    reject_unknown_keys(pairs, {"require_target", "min_speedup", "select", "dedupe", "cap_per_definition", "cap_rule",
                                "seed"}, "pairs", errs);
    section_reader p{pairs, "pairs", errs};
    p.flag("require_target", r.pairs.require_target);
    p.number("min_speedup", r.pairs.min_speedup);
    p.select(r.pairs.select);
    p.flag("dedupe", r.pairs.dedupe);
    p.cap(r.pairs.cap);
  } else {
    const auto& c = section("collect");
    reject_unknown_keys(c, {"require_target", "speedup_above", "select", "variants", "dedupe", "cap_per_definition",
                            "seed"}, "collect", errs);
    section_reader k{c, "collect", errs};
    k.flag("require_target", r.collect.require_target);
    k.number("speedup_above", r.collect.speedup_above);
    k.select(r.collect.select);
    r.collect.variants = get_string_list(c, "variants", "collect", errs, false).value_or(std::vector<std::string>{});
    k.flag("dedupe", r.collect.dedupe);
    k.cap(r.collect.cap);
  }
  const auto& reason = section("reason");
  reject_unknown_keys(reason, {"model", "min_chars", "max_chars", "target_chars", "max_attempts", "temperature",
                               "top_p", "require_block", "no_code", "max_quoted_lines", "name_problems"},
                      "reason", errs);
  section_reader rs{reason, "reason", errs};
  r.reason_model = get_string(reason, "model", "reason", errs).value_or("");
  rs.count("min_chars", r.rules.min_chars);
  rs.count("max_chars", r.rules.max_chars);
  rs.count("target_chars", r.rules.target_chars);
  if (auto v = get_int(reason, "max_attempts", "reason", errs, false)) r.rules.max_attempts = static_cast<int>(*v);
  rs.number("temperature", r.sampling.temperature);
  rs.number("top_p", r.sampling.top_p);
  rs.flag("require_block", r.rules.require_block);
  rs.flag("no_code", r.rules.no_code);
  if (auto v = get_int(reason, "max_quoted_lines", "reason", errs, false)) r.rules.max_quoted_lines = static_cast<int>(*v);
  rs.flag("name_problems", r.rules.name_problems);
  // Fixit rows go through the editor at export (upstream's stage 01), which removes leftover tags.
  r.rules.tags_left_to_editor = r.row_format == "fixit";
  const auto& exp = section("export");
  reject_unknown_keys(exp, {"max_tokens", "chat_template", "kernel_fence", "normalize_with_chat_template"}, "export", errs);
  section_reader ex{exp, "export", errs};
  ex.count("max_tokens", r.max_tokens);
  r.chat_template = get_string(exp, "chat_template", "export", errs, false).value_or("auto");
  r.kernel_fence = get_string(exp, "kernel_fence", "export", errs, false).value_or("cpp");
  ex.flag("normalize_with_chat_template", r.normalize);
  const auto& paper = section("paper");
  if (!paper.contains("rows") || !paper["rows"].is_number_integer()) errs.add("paper.rows", "expected an integer");
  r.paper = paper;
  if (r.name != name) errs.add("name", fmt::format("is '{}' but the file is {}.json", r.name, name));
  if (!errs.empty()) return errs.to_error().with_context(file.string());
  return r;
}

result<recipe_run_facts> describe_runs(const recipe& r, const std::vector<fs::path>& run_dirs) {
  recipe_run_facts f;
  std::set<std::string> tasks, variants;
  for (const auto& dir : run_dirs) {
    auto run = read_run_directory(dir);
    if (!run) return run.err();
    for (const auto& rt : run->trajectories) {
      if (!rt.t) continue;
      auto meta = rt.t->meta();
      if (std::find(r.tasks.begin(), r.tasks.end(), meta.task) == r.tasks.end()) continue;
      tasks.insert(meta.task);
      variants.insert(meta.variant);
      ++f.trajectories;
      f.max_turns = std::max(f.max_turns, meta.turn_limit);
    }
  }
  for (const auto& t : r.tasks)
    if (tasks.count(t)) f.tasks_covered.push_back(t);
  f.variants.assign(variants.begin(), variants.end());
  return f;
}

ordered_json compare_with_paper(const recipe& r, const ordered_json& stage_counts, const recipe_run_facts& f) {
  ordered_json rows = ordered_json::array();
  bool all_match = true;
  auto row = [&](const char* stage, const char* ours_key, const char* paper_key) {
    ordered_json ours = stage_counts.contains(ours_key) ? stage_counts[ours_key] : ordered_json(nullptr);
    ordered_json paper = r.paper.contains(paper_key) ? r.paper[paper_key] : ordered_json(nullptr);
    ordered_json matches = paper.is_null() || ours.is_null() ? ordered_json(nullptr) : ordered_json(ours == paper);
    if (matches.is_boolean() && !matches.get<bool>()) all_match = false;
    rows.push_back({{"stage", stage}, {"ours", ours}, {"paper", paper}, {"matches", matches}});
  };
  if (r.row_format == "fixit") {
    row("wrong kernels mined", "mined", "mined");
    row("repairs with a correct turn", "repaired", "repaired");
    row("pairs", "pairs", "pairs");
  } else {
    row("correct kernel turns", "correct_turns", "correct_kernel_turns");
    row("kernels collected", "kernels", "kernels");
  }
  row("rationales accepted", "rationales", "rationales");
  row("SFT rows", "rows", "rows");
  ordered_json why = ordered_json::array();
  if (!all_match) {
    if (f.tasks_covered.size() < r.tasks.size()) {
      std::string missing;
      for (const auto& t : r.tasks)
        if (std::find(f.tasks_covered.begin(), f.tasks_covered.end(), t) == f.tasks_covered.end())
          missing += (missing.empty() ? "" : ", ") + t;
      why.push_back(fmt::format("the runs cover {} of the recipe's {} tasks (none of {})", f.tasks_covered.size(),
                                r.tasks.size(), missing));
    }
    why.push_back(fmt::format(
        "the runs hold {} trajectories of the recipe's tasks with at most {} turns; upstream's {} runs held 12 per "
        "definition (3 prompt variants x 4) with 8 turns", f.trajectories, f.max_turns,
        r.row_format == "fixit" ? "student (Qwen3.6-27B)" : "teacher (Gemini 3.1 Pro)"));
    if (r.row_format == "fixit" && f.repair_model != r.repair_model)
      why.push_back(fmt::format("repair teacher {} instead of the recipe's {}", f.repair_model, r.repair_model));
    if (f.reason_model != r.reason_model)
      why.push_back(fmt::format("reasoning teacher {} instead of the recipe's {}", f.reason_model, r.reason_model));
    if (f.evaluator != "pipeline") why.push_back(fmt::format("evaluator {}: scripted verdicts, not the GPU's", f.evaluator));
    if (f.cpu_only) why.push_back("--cpu-only: no kernel ran on a GPU, so none passed");
    if (f.max_tokens != r.max_tokens)
      why.push_back(fmt::format("rows limited to {} tokens instead of the recipe's {} (--max-tokens)", f.max_tokens,
                                r.max_tokens));
    if (!f.underfilled.empty()) {
      std::string list;
      for (const auto& t : f.underfilled) list += (list.empty() ? "" : ", ") + t;
      why.push_back(fmt::format("--allow-underfilled-definitions: {} had fewer mined rows than the cap {} (upstream "
                                "stops there)", list, r.mine.cap.cap));
    }
  }
  return {{"stages", rows}, {"why_different", why}};
}

}  // namespace ptxbench::adapt
