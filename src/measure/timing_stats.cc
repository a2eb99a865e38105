#include "measure/timing_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

namespace ptxbench::measure {

namespace {

// The quantile of a sample already sorted (no copy, no sort).
double sorted_quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

}  // namespace

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return sorted_quantile(v, q);
}

latency_stats summarize(const std::vector<double>& values) {
  latency_stats s;
  s.samples = static_cast<int>(values.size());
  if (values.empty()) return s;
  s.median_ms = quantile(values, 0.5);
  s.p10_ms = quantile(values, 0.1);
  s.p90_ms = quantile(values, 0.9);
  s.mean_ms = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double var = 0;
  for (double x : values) var += (x - s.mean_ms) * (x - s.mean_ms);
  var = values.size() > 1 ? var / static_cast<double>(values.size() - 1) : 0;
  s.cv = s.mean_ms > 0 ? std::sqrt(var) / s.mean_ms : 0;
  return s;
}

namespace {

// overhead = median; allowance = max(floor, 3 × (p90 − median)).
std::pair<double, double> overhead_and_allowance(const std::vector<double>& samples, double min_allowance_ms) {
  if (samples.empty()) return {0, min_allowance_ms};
  double median = quantile(samples, 0.5);
  return {median, std::max(min_allowance_ms, 3 * (quantile(samples, 0.9) - median))};
}

}  // namespace

wallclock_calibration calibrate(const std::vector<double>& noop, double min_allowance_ms) {
  wallclock_calibration c;
  std::tie(c.overhead_ms, c.allowance_ms) = overhead_and_allowance(noop, min_allowance_ms);
  return c;
}

median_interval median_confidence_interval(std::vector<double> v, double z) {
  median_interval m;
  m.n = static_cast<int>(v.size());
  if (v.empty()) return m;
  std::sort(v.begin(), v.end());
  m.median = sorted_quantile(v, 0.5);
  const double n = static_cast<double>(v.size());
  // 1-based ranks j and k with P(x(j) <= median <= x(k)) >= the confidence.
  long j = static_cast<long>(std::floor(n / 2 - z * std::sqrt(n) / 2));
  long k = static_cast<long>(std::ceil(n / 2 + z * std::sqrt(n) / 2)) + 1;
  j = std::clamp(j, 1L, static_cast<long>(v.size()));
  k = std::clamp(k, 1L, static_cast<long>(v.size()));
  m.low = v[static_cast<std::size_t>(j - 1)];
  m.high = v[static_cast<std::size_t>(k - 1)];
  m.half_width = m.median > 0 ? std::max(m.median - m.low, m.high - m.median) / m.median : 0;
  return m;
}

std::string_view stop_reason_name(stop_reason r) {
  switch (r) {
    case stop_reason::converged: return "converged";
    case stop_reason::time_cap: return "time_cap";
    case stop_reason::max_pairs: return "max_pairs";
    case stop_reason::fixed: return "fixed";
  }
  return "?";
}

std::optional<stop_reason> should_stop(const stopping_rule& rule, const std::vector<double>& ratios, double elapsed_s) {
  const int n = static_cast<int>(ratios.size());
  if (rule.fixed_pairs > 0) return n >= rule.fixed_pairs ? std::optional(stop_reason::fixed) : std::nullopt;
  if (n >= rule.max_pairs) return stop_reason::max_pairs;
  // The interval is looked at every fifth pair: sorting thousands of ratios after each would cost
  // more host time than the pairs themselves.
  if (n >= rule.min_pairs && (n - rule.min_pairs) % 5 == 0 &&
      median_confidence_interval(ratios).half_width <= rule.target_half_width)
    return stop_reason::converged;
  if (n >= rule.min_pairs && elapsed_s >= rule.time_cap_s) return stop_reason::time_cap;
  return std::nullopt;
}

double trusted_bound_ms(const timed_pair& p, const wallclock_calibration& cal) {
  return std::max(0.0, p.candidate_wall_ms - cal.overhead_ms);
}

double charged_candidate_ms(const timed_pair& p, const wallclock_calibration& cal, bool* disagreed) {
  double bound = trusted_bound_ms(p, cal);
  if (disagreed) *disagreed = false;
  if (p.candidate_span_ms <= 0) return bound;
  if (bound > p.candidate_span_ms + cal.allowance_ms) {
    // Continuous in the bound: a pair just past the allowance is charged just past the span, so
    // honest calls whose host work sits near the allowance do not jump between two values
    // (bench/results/h100: a GEMM's speedup split 0.86 / 0.895 with a jump to the bound). Work
    // hidden from the span is charged in full beyond the allowance, as before within it.
    if (disagreed) *disagreed = true;
    return bound - cal.allowance_ms;
  }
  return p.candidate_span_ms;
}

double pair_speedup(const timed_pair& p, const wallclock_calibration& cal) {
  double used = charged_candidate_ms(p, cal);
  return used > 0 ? p.reference_ms / used : 0;
}

candidate_timing decide_candidate_latency(const std::vector<timed_pair>& pairs, const wallclock_calibration& cal) {
  candidate_timing out;
  for (const auto& p : pairs) {
    bool disagreed = false;
    double used = charged_candidate_ms(p, cal, &disagreed);
    out.disagreements += disagreed ? 1 : 0;
    out.used_ms.push_back(used);
    out.ratios.push_back(used > 0 ? p.reference_ms / used : 0);
  }
  return out;
}

std::optional<floor_violation> find_below_floor(const std::vector<timed_pair>& pairs, const wallclock_calibration& cal,
                                                double floor_ms) {
  if (!(floor_ms > 0)) return std::nullopt;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const auto& p = pairs[i];
    double bound = trusted_bound_ms(p, cal);
    bool span_below = p.candidate_span_ms > 0 && p.candidate_span_ms < floor_ms;
    bool bound_below = p.candidate_span_ms <= 0 && bound + cal.allowance_ms < floor_ms;
    if (span_below || bound_below) return floor_violation{static_cast<int>(i), p.candidate_span_ms, bound, span_below};
  }
  return std::nullopt;
}

}  // namespace ptxbench::measure
