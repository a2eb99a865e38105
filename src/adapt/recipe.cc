#include "adapt/recipe.h"

#include <algorithm>

#include <fmt/format.h>

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
  auto min_speedup = [&](const ordered_json& s, const std::string& path) -> std::optional<double> {
    if (!s.contains("min_speedup") || s["min_speedup"].is_null()) return std::nullopt;
    return get_number(s, "min_speedup", path, errs);
  };
  auto cap = [&](const ordered_json& s, const std::string& path) -> int {
    if (!s.contains("cap_per_definition") || s["cap_per_definition"].is_null()) return -1;
    return static_cast<int>(get_int(s, "cap_per_definition", path, errs).value_or(-1));
  };
  auto select = [&](const ordered_json& s, const std::string& path) {
    auto v = parse_pair_select(s.value("select", "all"));
    if (!v) errs.add(json_child(path, "select"), "expected all, first or best");
    return v.value_or(pair_select::all);
  };
  if (r.row_format == "fixit") {
    const auto& mine = section("mine");
    r.mine_variants = get_string_list(mine, "variants", "mine", errs).value_or(std::vector<std::string>{});
    if (auto t = get_string(mine, "turns", "mine", errs, false)) {
      auto turns = parse_turn_list(*t);
      if (!turns) errs.add("mine.turns", turns.err().message);
      else r.mine_turns = *turns;
    }
    r.mine_cap = cap(mine, "mine");
    r.mine_seed = static_cast<uint64_t>(get_int(mine, "seed", "mine", errs, false).value_or(0));
    const auto& repair = section("repair");
    r.repair_model = get_string(repair, "model", "repair", errs).value_or("");
    r.repair_turns = static_cast<int>(get_int(repair, "turns", "repair", errs).value_or(5));
    r.repair_target_speedup = get_number(repair, "target_speedup", "repair", errs).value_or(0.15);
    const auto& pairs = section("pairs");
    r.pairs_require_target = get_bool(pairs, "require_target", "pairs", errs).value_or(false);
    r.pairs_min_speedup = min_speedup(pairs, "pairs");
    r.pairs_select = select(pairs, "pairs");
    r.pairs_cap = cap(pairs, "pairs");
    r.pairs_seed = static_cast<uint64_t>(get_int(pairs, "seed", "pairs", errs, false).value_or(0));
  } else {
    const auto& c = section("collect");
    r.collect.require_target = get_bool(c, "require_target", "collect", errs).value_or(false);
    r.collect.min_speedup = min_speedup(c, "collect");
    r.collect.select = select(c, "collect");
    r.collect.variants = get_string_list(c, "variants", "collect", errs, false).value_or(std::vector<std::string>{});
    r.collect.cap_per_definition = cap(c, "collect");
    r.collect.seed = static_cast<uint64_t>(get_int(c, "seed", "collect", errs, false).value_or(0));
  }
  const auto& reason = section("reason");
  r.reason_model = get_string(reason, "model", "reason", errs).value_or("");
  r.rules.min_chars = static_cast<std::size_t>(get_int(reason, "min_chars", "reason", errs).value_or(2000));
  r.rules.max_chars = static_cast<std::size_t>(get_int(reason, "max_chars", "reason", errs).value_or(190000));
  r.rules.max_attempts = static_cast<int>(get_int(reason, "max_attempts", "reason", errs).value_or(4));
  const auto& exp = section("export");
  r.max_tokens = static_cast<std::size_t>(get_int(exp, "max_tokens", "export", errs).value_or(65536));
  r.chat_template = get_string(exp, "chat_template", "export", errs, false).value_or("auto");
  const auto& paper = section("paper");
  if (!paper.contains("rows") || !paper["rows"].is_number_integer()) errs.add("paper.rows", "expected an integer");
  r.paper = paper;
  if (r.name != name) errs.add("name", fmt::format("is '{}' but the file is {}.json", r.name, name));
  if (!errs.empty()) return errs.to_error().with_context(file.string());
  return r;
}

ordered_json compare_with_paper(const recipe& r, const ordered_json& stage_counts) {
  ordered_json rows = ordered_json::array();
  auto paper = [&](const char* key) { return r.paper.contains(key) ? r.paper[key] : ordered_json(nullptr); };
  auto ours = [&](const char* key) { return stage_counts.contains(key) ? stage_counts[key] : ordered_json(nullptr); };
  if (r.row_format == "fixit") {
    rows.push_back({{"stage", "wrong kernels mined"}, {"ours", ours("mined")}, {"paper", paper("mined")}});
    rows.push_back({{"stage", "repairs with a correct turn"}, {"ours", ours("repaired")}, {"paper", paper("repaired")}});
    rows.push_back({{"stage", "pairs"}, {"ours", ours("pairs")}, {"paper", paper("pairs")}});
  } else {
    rows.push_back({{"stage", "correct kernel turns"}, {"ours", ours("correct_turns")}, {"paper", paper("correct_kernel_turns")}});
    rows.push_back({{"stage", "kernels collected"}, {"ours", ours("kernels")}, {"paper", paper("kernels")}});
  }
  rows.push_back({{"stage", "rationales accepted"}, {"ours", ours("rationales")}, {"paper", paper("rationales")}});
  rows.push_back({{"stage", "SFT rows"}, {"ours", ours("rows")}, {"paper", paper("rows")}});
  return rows;
}

}  // namespace ptxbench::adapt
