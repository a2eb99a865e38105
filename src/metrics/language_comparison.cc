#include "metrics/language_comparison.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "core/csv.h"

namespace ptxbench::metrics {

namespace {

language_side side(const std::vector<const turn_group*>& runs, int turn_limit, const std::vector<double>& p_values) {
  language_side s;
  std::vector<turn_record> pooled;
  std::set<std::string> dirs;
  for (const auto* g : runs) {
    dirs.insert(g->key.exp_dir);
    pooled.insert(pooled.end(), g->turns.begin(), g->turns.end());
  }
  s.runs = static_cast<int>(dirs.size());
  if (pooled.empty()) return s;
  s.turns = compute_turn_rates(pooled, turn_limit).n_turns;
  s.best = compute_best_speedups(pooled, turn_limit);
  s.fast_p = compute_fast_p(pooled, turn_limit, p_values);
  return s;
}

}  // namespace

std::vector<language_comparison> compare_languages(const std::vector<turn_group>& groups, int turn_limit,
                                                   const std::vector<double>& p_values) {
  using task_key = std::tuple<std::string, std::string, std::string>;  // model, arch, definition
  std::vector<task_key> order;
  for (const auto& g : groups) {
    if (g.key.language != "triton") continue;
    task_key k{g.key.model, g.key.arch, g.key.definition};
    if (std::find(order.begin(), order.end(), k) == order.end()) order.push_back(k);
  }
  std::vector<language_comparison> out;
  for (const auto& [model, arch, definition] : order) {
    std::vector<const turn_group*> cuda, triton;
    for (const auto& g : groups) {
      if (g.key.model != model || g.key.arch != arch || g.key.definition != definition) continue;
      (g.key.language == "triton" ? triton : cuda).push_back(&g);
    }
    out.push_back({model, arch, definition, turn_limit, side(cuda, turn_limit, p_values),
                   side(triton, turn_limit, p_values)});
  }
  return out;
}

std::string language_comparison_csv(const std::vector<language_comparison>& rows) {
  std::vector<std::string> header = {"model", "arch", "definition", "turn_limit", "p"};
  for (const char* lang : {"cuda", "triton"})
    for (const char* col : {"fast_p", "fast_inst_p", "best_speedup", "best_target_speedup", "runs", "n_turns"})
      header.push_back(std::string(lang) + "_" + col);
  csv_builder csv(header);
  for (const auto& r : rows) {
    std::size_t points = std::max(r.cuda.fast_p.size(), r.triton.fast_p.size());
    for (std::size_t i = 0; i < points; ++i) {
      double p = i < r.triton.fast_p.size() ? r.triton.fast_p[i].p : r.cuda.fast_p[i].p;
      csv.cell(r.model).cell(r.arch).cell(r.definition).cell(r.turn_limit).cell(p);
      for (const language_side* s : {&r.cuda, &r.triton}) {
        if (i < s->fast_p.size()) {
          csv.cell(s->fast_p[i].fast).cell(s->fast_p[i].inst).cell(s->best.best).cell(s->best.best_target);
        } else {
          for (int k = 0; k < 4; ++k) csv.cell(std::optional<double>());
        }
        csv.cell(s->runs).cell(s->turns);
      }
      csv.end_row();
    }
  }
  return csv.text();
}

}  // namespace ptxbench::metrics
