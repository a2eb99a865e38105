#include "metrics/aggregate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace ptxbench::metrics {
namespace {

bool within(const turn_record& r, int turn_limit) { return r.counted() && r.turn < turn_limit; }

std::optional<double> ratio(int64_t num, int64_t den) {
  if (den == 0) return std::nullopt;
  return static_cast<double>(num) / static_cast<double>(den);
}

struct variant_counts {
  int64_t n = 0;
  std::vector<int64_t> fast, inst;  ///< per p
};

}  // namespace

std::vector<turn_group> group_turns(const std::vector<turn_record>& records) {
  std::vector<turn_group> groups;
  std::map<group_key, std::size_t> index;
  for (const auto& r : records) {
    group_key k{r.model, r.arch, r.definition, r.exp_dir, r.language};
    auto [it, inserted] = index.try_emplace(k, groups.size());
    if (inserted) groups.push_back({std::move(k), {}});
    groups[it->second].turns.push_back(r);
  }
  return groups;
}

turn_rates compute_turn_rates(std::span<const turn_record> turns, int turn_limit, std::optional<double> min_coverage) {
  turn_rates out;
  for (const auto& r : turns) {
    if (!within(r, turn_limit)) continue;
    ++out.n_turns;
    out.correct_turns += r.correct();
    out.target_correct_turns += r.target_correct;
    if (min_coverage) out.coverage_target_correct_turns += r.target_correct && r.coverage && *r.coverage >= *min_coverage;
  }
  out.rate = ratio(out.correct_turns, out.n_turns);
  out.target_rate = ratio(out.target_correct_turns, out.n_turns);
  if (min_coverage) out.coverage_target_rate = ratio(out.coverage_target_correct_turns, out.n_turns);
  return out;
}

trajectory_rates compute_trajectory_rates(std::span<const turn_record> turns, int turn_limit) {
  std::set<std::string> all, correct, target;
  for (const auto& r : turns) {
    if (!r.counted()) continue;
    all.insert(r.trajectory);
    if (r.turn >= turn_limit) continue;
    if (r.correct()) correct.insert(r.trajectory);
    if (r.target_correct) target.insert(r.trajectory);
  }
  trajectory_rates out;
  out.n_trajectories = static_cast<int64_t>(all.size());
  out.correct_trajectories = static_cast<int64_t>(correct.size());
  out.target_correct_trajectories = static_cast<int64_t>(target.size());
  out.rate = ratio(out.correct_trajectories, out.n_trajectories);
  out.target_rate = ratio(out.target_correct_trajectories, out.n_trajectories);
  return out;
}

best_speedups compute_best_speedups(std::span<const turn_record> turns, int turn_limit) {
  best_speedups out;
  for (const auto& r : turns) {
    if (!within(r, turn_limit) || !r.correct() || !r.speedup || !std::isfinite(*r.speedup)) continue;
    out.best = std::max(out.best, *r.speedup);
    if (r.target_correct) out.best_target = std::max(out.best_target, *r.speedup);
  }
  return out;
}

std::vector<fast_p_point> compute_fast_p(std::span<const turn_record> turns, int turn_limit,
                                         const std::vector<double>& p_values) {
  std::map<std::string, variant_counts> variants;
  for (const auto& r : turns) {
    if (!within(r, turn_limit)) continue;
    auto& v = variants[r.variant];
    if (v.fast.empty()) { v.fast.assign(p_values.size(), 0); v.inst.assign(p_values.size(), 0); }
    ++v.n;
    if (!r.correct() || !r.speedup) continue;
    for (std::size_t i = 0; i < p_values.size(); ++i) {
      if (!(*r.speedup > p_values[i])) continue;
      ++v.fast[i];
      v.inst[i] += r.target_correct;
    }
  }
  std::vector<fast_p_point> out;
  if (variants.empty()) return out;
  for (std::size_t i = 0; i < p_values.size(); ++i) {
    fast_p_point pt;
    pt.p = p_values[i];
    pt.n_variants = static_cast<int>(variants.size());
    pt.fast_min = pt.inst_min = 1;
    for (const auto& [name, v] : variants) {
      double f = static_cast<double>(v.fast[i]) / static_cast<double>(v.n);
      double g = static_cast<double>(v.inst[i]) / static_cast<double>(v.n);
      pt.n_turns += v.n;
      pt.fast += f;  // summed here, divided once below (keeps 0.75 exact)
      pt.inst += g;
      pt.fast_min = std::min(pt.fast_min, f);
      pt.fast_max = std::max(pt.fast_max, f);
      pt.inst_min = std::min(pt.inst_min, g);
      pt.inst_max = std::max(pt.inst_max, g);
    }
    pt.fast /= pt.n_variants;
    pt.inst /= pt.n_variants;
    out.push_back(pt);
  }
  return out;
}

std::vector<double> p_grid(double from, double to, double step) {
  std::vector<double> out;
  if (!(step > 0) || !(to >= from) || !std::isfinite(to - from)) return out;
  // Count the points first: stepping until p passes `to` never ends when the step is below the
  // rounding (1e-9) or below the spacing of doubles near `from`.
  const double last = std::floor((to - from) / step + 1e-7);
  if (!(last <= 1e7)) return out;
  for (int64_t i = 0; i <= static_cast<int64_t>(last); ++i)
    out.push_back(std::round((from + static_cast<double>(i) * step) * 1e9) / 1e9);
  return out;
}

metrics_tables compute_metrics(const std::vector<turn_group>& groups, const metrics_options& options) {
  metrics_tables t;
  for (const auto& g : groups) {
    for (int limit : options.turn_limits) {
      t.turn_rates.push_back({g.key, limit, compute_turn_rates(g.turns, limit, options.min_coverage)});
      t.trajectory_rates.push_back({g.key, limit, compute_trajectory_rates(g.turns, limit)});
      t.best_speedups.push_back({g.key, limit, compute_best_speedups(g.turns, limit)});
      for (const auto& pt : compute_fast_p(g.turns, limit, options.p_values)) t.fast_p.push_back({g.key, limit, pt});
    }
  }
  return t;
}

}  // namespace ptxbench::metrics
