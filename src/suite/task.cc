#include "suite/task.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/file_io.h"
#include "suite/sequence_layout.h"
#include "suite/solution.h"
#include "suite/unknown_target.h"

namespace ptxbench {
namespace fs = std::filesystem;

const task* suite::find_task(const std::string& name) const {
  for (const auto& t : tasks)
    if (t.name == name) return &t;
  return nullptr;
}

const target_info* suite::find_target(const std::string& name) const {
  auto it = targets.find(name);
  return it == targets.end() ? nullptr : &it->second;
}

result<const target_info*> suite::target_for_gpu(const std::string& gpu_model) const {
  for (const auto& [name, t] : targets)
    if (t.gpu_name == gpu_model) return &t;
  std::vector<std::string> words;
  std::string word;
  for (char c : gpu_model + " ") {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  for (const auto& [name, t] : targets)
    if (std::find(words.begin(), words.end(), name) != words.end()) return &t;
  std::string names;
  for (const auto& [name, t] : targets) names += (names.empty() ? "" : ", ") + name + " (" + t.gpu_name + ")";
  return make_error("GPU '" + gpu_model + "' is none of the suite's targets: " + names);
}

static std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> close_names(const std::string& name, const std::vector<std::string>& candidates) {
  std::vector<std::pair<std::size_t, std::string>> scored;
  for (const auto& c : candidates) {
    if (c.rfind(name, 0) == 0 && !name.empty()) scored.emplace_back(0, c);  // a prefix is the best hint
    else if (auto d = edit_distance(name, c); d <= 3) scored.emplace_back(d, c);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (auto& [d, c] : scored) out.push_back(c);
  return out;
}

std::string unknown_name_message(const std::string& kind, const std::string& name,
                                 const std::vector<std::string>& candidates, const std::string& list_hint) {
  auto close = close_names(name, candidates);
  if (!close.empty()) return fmt::format("unknown {} '{}' (did you mean '{}'?)", kind, name, close.front());
  return fmt::format("unknown {} '{}'; {}", kind, name, list_hint);
}

namespace {

constexpr std::size_t k_max_suite_file = 16u << 20;

result<ordered_json> load_json_file(const fs::path& path) {
  auto text = read_text_file(path, k_max_suite_file);
  if (!text) return text.err();
  return parse_json(*text, path.string());
}

// Reads "work": {"flops", "bytes_read", "bytes_written", "note"} (formulas: suite/work_model.h).
std::optional<work_formulas> read_work_formulas(const ordered_json& j, const std::string& here, json_errors& errs) {
  if (!expect_object(j, here, errs)) return std::nullopt;
  reject_unknown_keys(j, {"flops", "bytes_read", "bytes_written", "note"}, here, errs);
  work_formulas w;
  w.flops = get_string(j, "flops", here, errs).value_or("");
  w.bytes_read = get_string(j, "bytes_read", here, errs).value_or("");
  w.bytes_written = get_string(j, "bytes_written", here, errs).value_or("");
  w.note = get_string(j, "note", here, errs, false, false).value_or("");
  return w;
}

// Reads "peaks": {"bf16_dense_tflops", "hbm_tb_per_s", "datasheet_bf16_dense_tflops", "source", "note"}.
std::optional<target_peaks> read_target_peaks(const ordered_json& j, const std::string& here, json_errors& errs) {
  if (!expect_object(j, here, errs)) return std::nullopt;
  reject_unknown_keys(j, {"bf16_dense_tflops", "hbm_tb_per_s", "datasheet_bf16_dense_tflops", "source", "note"}, here,
                      errs);
  target_peaks p;
  p.bf16_dense_flops_per_s = get_number(j, "bf16_dense_tflops", here, errs).value_or(0) * 1e12;
  p.memory_bytes_per_s = get_number(j, "hbm_tb_per_s", here, errs).value_or(0) * 1e12;
  p.datasheet_bf16_dense_flops_per_s = get_number(j, "datasheet_bf16_dense_tflops", here, errs).value_or(0) * 1e12;
  p.source = get_string(j, "source", here, errs).value_or("");
  p.note = get_string(j, "note", here, errs, false, false).value_or("");
  for (auto [key, v] : {std::pair<const char*, double>{"bf16_dense_tflops", p.bf16_dense_flops_per_s},
                        {"hbm_tb_per_s", p.memory_bytes_per_s}})
    if (j.contains(key) && !(v > 0)) errs.add(json_child(here, key), "expected a number > 0");
  if (p.datasheet_bf16_dense_flops_per_s > p.bf16_dense_flops_per_s)
    errs.add(json_child(here, "bf16_dense_tflops"), "is below the datasheet figure; the floor needs an upper bound");
  return p;
}

result<std::map<std::string, target_info>> load_targets(const fs::path& file) {
  auto j = load_json_file(file);
  if (!j) return j.err();
  json_errors errs;
  std::map<std::string, target_info> out;
  std::string path = file.filename().string();
  if (!expect_object(*j, path, errs)) return errs.to_error();
  std::string tpath = json_child(path, "targets");
  if (!j->contains("targets") || !expect_object((*j)["targets"], tpath, errs)) {
    if (errs.empty()) errs.add(tpath, "missing required field");
    return errs.to_error();
  }
  for (const auto& item : (*j)["targets"].items()) {
    std::string here = json_child(tpath, item.key());
    const auto& tj = item.value();
    if (!expect_object(tj, here, errs)) continue;
    reject_unknown_keys(tj, {"gpu_name", "arch", "gencode", "arch_family", "pack", "required_families",
                             "verification", "peaks"}, here, errs);
    target_info t;
    t.name = item.key();
    t.gpu_name = get_string(tj, "gpu_name", here, errs).value_or("");
    t.arch = get_string(tj, "arch", here, errs).value_or("");
    t.gencode = get_string(tj, "gencode", here, errs).value_or("");
    t.arch_family = get_string(tj, "arch_family", here, errs).value_or("");
    t.pack = get_string(tj, "pack", here, errs).value_or("");
    t.required_families = get_string_list(tj, "required_families", here, errs).value_or(std::vector<std::string>{});
    t.verification = get_string(tj, "verification", here, errs).value_or("");
    if (!t.verification.empty() && t.verification != "runtime" && t.verification != "static_only")
      errs.add(json_child(here, "verification"), "expected \"runtime\" or \"static_only\"");
    if (tj.contains("peaks")) t.peaks = read_target_peaks(tj["peaks"], json_child(here, "peaks"), errs);
    out[t.name] = t;
  }
  if (!errs.empty()) return errs.to_error();
  return out;
}

result<workload> load_workload(const fs::path& file, const std::string& uuid, const std::string& def_name) {
  auto text = read_text_file(file, k_max_suite_file);
  if (!text) return text.err();
  std::size_t line_no = 0, start = 0;
  while (start < text->size()) {
    auto end = text->find('\n', start);
    if (end == std::string::npos) end = text->size();
    std::string line = text->substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::string where = fmt::format("{}:{}", file.string(), line_no);
    auto j = parse_json(line, where);
    if (!j) return j.err();
    json_errors errs;
    if (!expect_object(*j, where, errs)) return errs.to_error();
    reject_unknown_keys(*j, {"definition", "workload", "solution", "evaluation"}, where, errs);
    auto def = get_string(*j, "definition", where, errs);
    if (!errs.empty()) return errs.to_error();
    if (*def != def_name) return make_error(fmt::format("{}: definition is \"{}\", expected \"{}\"", where, *def, def_name));
    if (!j->contains("workload")) return make_error(where + ": workload: missing required field");
    auto w = workload_from_json((*j)["workload"], where + ": workload");
    if (!w) return w.err();
    if (w->uuid == uuid) return w;
  }
  return make_error(fmt::format("{}: no workload with uuid {}", file.string(), uuid));
}

result<task> load_task(const ordered_json& tj, const std::string& here, const fs::path& root,
                       const std::map<std::string, target_info>& targets) {
  json_errors errs;
  if (!expect_object(tj, here, errs)) return errs.to_error();
  reject_unknown_keys(tj, {"name", "problem", "definition", "workload", "workload_uuid", "baseline", "baseline_options", "tolerance",
                           "correctness_trials", "targets", "status", "held_out", "note", "work"}, here, errs);
  task t;
  t.name = get_string(tj, "name", here, errs).value_or("");
  t.problem = get_string(tj, "problem", here, errs).value_or("");
  auto def_rel = get_string(tj, "definition", here, errs);
  auto wl_rel = get_string(tj, "workload", here, errs);
  auto uuid = get_string(tj, "workload_uuid", here, errs);
  t.baseline = get_string(tj, "baseline", here, errs, false, false).value_or("");
  if (tj.contains("baseline_options")) {
    if (tj["baseline_options"].is_object()) t.baseline_options = tj["baseline_options"];
    else errs.add(json_child(here, "baseline_options"), "expected object, got " + json_type_name(tj["baseline_options"]));
  }
  t.correctness_trials = static_cast<int>(get_int(tj, "correctness_trials", here, errs).value_or(3));
  if (t.correctness_trials < 1) errs.add(json_child(here, "correctness_trials"), "expected an integer >= 1");
  t.targets = get_string_list(tj, "targets", here, errs).value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < t.targets.size(); ++i)
    if (!targets.count(t.targets[i]))
      errs.add(json_index(json_child(here, "targets"), i), fmt::format("unknown target \"{}\"", t.targets[i]));
  t.status = get_string(tj, "status", here, errs).value_or("");
  if (!t.status.empty() && t.status != "ready" && t.status != "reference_pending")
    errs.add(json_child(here, "status"), "expected \"ready\" or \"reference_pending\"");
  if (t.status == "ready" && t.baseline.empty()) errs.add(json_child(here, "baseline"), "a ready task needs a baseline");
  t.held_out = get_bool(tj, "held_out", here, errs, false).value_or(false);
  t.note = get_string(tj, "note", here, errs, false, false).value_or("");
  if (tj.contains("work")) t.work_formula = read_work_formulas(tj["work"], json_child(here, "work"), errs);
  if (tj.contains("tolerance")) {
    std::string tp = json_child(here, "tolerance");
    if (expect_object(tj["tolerance"], tp, errs)) {
      reject_unknown_keys(tj["tolerance"], {"atol", "rtol"}, tp, errs);
      t.tol.atol = get_number(tj["tolerance"], "atol", tp, errs).value_or(1e-2);
      t.tol.rtol = get_number(tj["tolerance"], "rtol", tp, errs).value_or(1e-2);
    }
  }
  if (!errs.empty()) return errs.to_error();
  for (const auto* rel : {&*def_rel, &*wl_rel})
    if (auto why = unsafe_source_path_reason(*rel))
      return make_error(fmt::format("{}: unsafe path \"{}\": {}", here, *rel, *why));
  t.definition_path = root / *def_rel;
  t.workload_path = root / *wl_rel;
  auto dj = load_json_file(t.definition_path);
  if (!dj) return dj.err();
  auto d = definition_from_json(*dj, t.definition_path.string());
  if (!d) return d.err();
  if (d->name != t.name)
    return make_error(fmt::format("{}: definition name \"{}\" differs from task name \"{}\"",
                                  t.definition_path.string(), d->name, t.name));
  t.def = std::move(*d);
  auto w = load_workload(t.workload_path, *uuid, t.name);
  if (!w) return w.err();
  if (auto st = validate_workload(*w, t.def, t.workload_path.string() + ": workload"); !st) return st.err();
  // Index inputs (indptr, page indices) are checked here, so a bad one fails the suite's load.
  if (auto layout = sequence_layout_for(t.def, *w); !layout)
    return layout.err().with_context(t.workload_path.string() + ": workload");
  t.wl = std::move(*w);
  if (t.work_formula) {
    auto work = evaluate_work(*t.work_formula, resolve_axes(t.wl, t.def));
    if (!work) return work.err().with_context(json_child(here, "work"));
    t.work = *work;
  }
  return t;
}

}  // namespace

result<suite> load_suite(const fs::path& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return make_error(fmt::format("{}: suite folder not found", root.string()));
  suite s;
  s.root = root;
  auto targets = load_targets(root / "targets.json");
  if (!targets) return targets.err();
  s.targets = std::move(*targets);
  auto tasks_file = root / "tasks.json";
  auto j = load_json_file(tasks_file);
  if (!j) return j.err();
  json_errors errs;
  std::string path = tasks_file.filename().string();
  if (!expect_object(*j, path, errs) || !j->contains("tasks") ||
      !expect_array((*j)["tasks"], json_child(path, "tasks"), errs)) {
    if (errs.empty()) errs.add(json_child(path, "tasks"), "missing required field");
    return errs.to_error();
  }
  for (std::size_t i = 0; i < (*j)["tasks"].size(); ++i) {
    auto t = load_task((*j)["tasks"][i], json_index(json_child(path, "tasks"), i), root, s.targets);
    if (!t) return t.err();
    if (s.find_task(t->name)) return make_error(fmt::format("{}: duplicate task \"{}\"", path, t->name));
    s.tasks.push_back(std::move(*t));
  }
  return s;
}

result<evaluation_pair> resolve_evaluation(const suite& s, const std::string& task_name, const std::string& target_name,
                                           bool run_on_gpu) {
  evaluation_pair p{s.find_task(task_name), s.find_target(target_name)};
  if (!p.t) {
    std::vector<std::string> names;
    for (const auto& t : s.tasks) names.push_back(t.name);
    return make_error(unknown_name_message("task", task_name, names, "`ptxbench tasks` lists them"));
  }
  if (!p.target) return make_error(unknown_target_message(s, target_name));
  if (std::find(p.t->targets.begin(), p.t->targets.end(), target_name) == p.t->targets.end())
    return make_error(fmt::format("task {} does not list target {} (its targets: {})", p.t->name, target_name,
                                  fmt::join(p.t->targets, ", ")));
  if (run_on_gpu && p.t->status != "ready")
    return make_error(fmt::format("task {} cannot be evaluated on a GPU yet: {}", p.t->name,
                                  p.t->note.empty() ? "its reference is pending" : p.t->note));
  return p;
}

}  // namespace ptxbench
