#include "metrics/ceiling.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "core/csv.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "verdict/verdict_json.h"

namespace ptxbench::metrics {
namespace fs = std::filesystem;

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

status add_verdict(const ordered_json& j, const std::string& where, std::vector<reference_kernel>& kernels) {
  auto v = verdict_from_json(j);
  if (!v) return v.err().with_context(where);
  if (v->task.empty() || v->target.empty()) return make_error(where + ": a verdict without task or target");
  std::string file = j.is_object() && j.contains("file") && j["file"].is_string() ? j["file"].get<std::string>() : "";
  auto it = std::find_if(kernels.begin(), kernels.end(), [&](const reference_kernel& k) {
    return k.target == v->target && k.task == v->task && k.file == file;
  });
  if (it == kernels.end()) it = kernels.insert(kernels.end(), reference_kernel{v->target, v->task, file});
  ++it->evaluations;
  if (v->outcome() != eval_outcome::passed) it->last_failure = v->decided.message;
  else if (!v->target_correct()) it->last_failure = "passed, not target-correct: " + v->targets.reason;
  else if (!v->timing || !(v->timing->speedup > 0)) it->last_failure = "passed without a speedup";
  else it->speedups.push_back(v->timing->speedup);
  return ok();
}

std::string speedup_text(double s) { return s > 0 ? fmt::format("{:.3f}×", s) : "–"; }

// A table cell: one line, and a '|' that would end the cell escaped.
std::string cell_text(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 300)) {
    if (c == '\n' || c == '\r') out += ' ';
    else if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

}  // namespace

result<reference_set> load_reference_verdicts(const std::vector<fs::path>& files) {
  reference_set set;
  for (const auto& file : files) {
    auto text = read_text_file(file, std::size_t{256} << 20);
    if (!text) return text.err().with_context("--ceiling");
    auto j = parse_json(*text, file.string());
    if (!j) return j.err().with_context("--ceiling");
    const std::string where = "--ceiling " + file.string();
    if (j->is_array()) {
      if (j->empty()) return make_error(where + ": no verdict in the file");
      for (std::size_t i = 0; i < j->size(); ++i)
        if (auto st = add_verdict((*j)[i], fmt::format("{}: verdict {}", where, i), set.kernels); !st) return st.err();
    } else if (auto st = add_verdict(*j, where, set.kernels); !st) {
      return st.err();
    }
    set.sources.push_back(file.string());
  }
  for (auto& k : set.kernels) {
    k.speedup = median_of(k.speedups);
    if (!k.speedups.empty()) {
      auto [lo, hi] = std::minmax_element(k.speedups.begin(), k.speedups.end());
      k.speedup_min = *lo;
      k.speedup_max = *hi;
    }
  }
  return set;
}

std::vector<ceiling_row> compute_ceiling(const std::vector<turn_record>& records, int turn_limit,
                                         const reference_set& references) {
  std::map<std::pair<std::string, std::string>, ceiling_row> rows;
  auto row = [&](const std::string& target, const std::string& task) -> ceiling_row& {
    auto& r = rows[{target, task}];
    r.target = target;
    r.task = task;
    return r;
  };
  for (const auto& t : records) {
    // Upstream rows name no target (only the GPU family): their speedups were measured elsewhere.
    if (t.target.empty() || !t.counted() || t.turn >= turn_limit) continue;
    auto& r = row(t.target, t.definition);
    ++r.turns;
    if (t.correct() && t.target_correct && t.speedup && *t.speedup > r.models_best) {
      r.models_best = *t.speedup;
      r.best_model = t.model;
    }
  }
  for (const auto& k : references.kernels) {
    auto& r = row(k.target, k.task);
    // Several reference kernels for one task: the fastest target-correct one is the ceiling.
    if (!r.reference || k.speedup > r.reference->speedup) r.reference = k;
  }
  std::vector<ceiling_row> out;
  for (auto& [key, r] : rows) out.push_back(std::move(r));
  return out;
}

std::string ceiling_csv(const std::vector<ceiling_row>& rows, int turn_limit) {
  csv_builder csv({"target", "task", "turn_limit", "reference_file", "reference_evaluations",
                   "reference_target_correct", "reference_speedup", "reference_speedup_min", "reference_speedup_max",
                   "models_turns", "models_best_target_speedup", "best_model", "models_over_reference"});
  for (const auto& r : rows) {
    csv.cell(r.target).cell(r.task).cell(turn_limit);
    const auto* k = r.reference ? &*r.reference : nullptr;
    csv.cell(k ? k->file : "");
    csv.cell(k ? std::optional<int64_t>(k->evaluations) : std::nullopt);
    csv.cell(k ? std::optional<int64_t>(static_cast<int64_t>(k->speedups.size())) : std::nullopt);
    bool has_ref = k && k->speedup > 0;
    csv.cell(has_ref ? std::optional<double>(k->speedup) : std::nullopt);
    csv.cell(has_ref ? std::optional<double>(k->speedup_min) : std::nullopt);
    csv.cell(has_ref ? std::optional<double>(k->speedup_max) : std::nullopt);
    csv.cell(static_cast<int64_t>(r.turns));
    csv.cell(r.models_best > 0 ? std::optional<double>(r.models_best) : std::nullopt);
    csv.cell(r.best_model);
    csv.cell(has_ref && r.models_best > 0 ? std::optional<double>(r.models_best / k->speedup) : std::nullopt);
    csv.end_row();
  }
  return csv.text();
}

ceiling_cells ceiling_row_cells(const ceiling_row& r, const std::function<std::string(std::string_view)>& escape) {
  ceiling_cells c{"", "–", "", "–"};
  if (r.reference) {
    const auto& k = *r.reference;
    c.file = escape(k.file.empty() ? "?" : k.file);
    if (k.speedup > 0) {
      c.reference_speedup = fmt::format("{} ({:.3f}–{:.3f}; {} of {} target-correct)", speedup_text(k.speedup),
                                        k.speedup_min, k.speedup_max, k.speedups.size(), k.evaluations);
      if (r.models_best > 0) c.ratio = fmt::format("{:.2f}", r.models_best / k.speedup);
    } else {
      c.reference_speedup =
          fmt::format("none target-correct in {} evaluation(s): {}", k.evaluations, escape(k.last_failure));
    }
  }
  c.models_best = r.models_best > 0 ? fmt::format("{} ({})", speedup_text(r.models_best), escape(r.best_model))
                                    : (r.turns ? "none target-correct" : "no turns");
  return c;
}

std::string render_ceiling_markdown(const std::vector<ceiling_row>& rows, int turn_limit) {
  std::string md = fmt::format(
      "## Ceiling: the pack's reference kernel beside the models' best (target-correct, turns < {})\n\n"
      "| target | task | reference kernel (pack only) | its speedup (min–max) | models' best | best / reference |\n"
      "|---|---|---|---|---|---|\n",
      turn_limit);
  for (const auto& r : rows) {
    auto c = ceiling_row_cells(r, cell_text);
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cell_text(r.target), cell_text(r.task),
                      c.file.empty() ? "no reference kernel" : "`" + c.file + "`", c.reference_speedup, c.models_best,
                      c.ratio);
  }
  return md;
}

}  // namespace ptxbench::metrics
