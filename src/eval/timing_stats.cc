#include "eval/timing_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <utility>

namespace ptxbench::eval {

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  double pos = q * static_cast<double>(v.size() - 1);
  auto lo = static_cast<std::size_t>(std::floor(pos));
  auto hi = std::min(lo + 1, v.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
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

wallclock_calibration calibrate(const std::vector<double>& noop_wall, const std::vector<double>& noop_lead,
                                double min_allowance_ms) {
  wallclock_calibration c = calibrate(noop_wall, min_allowance_ms);
  if (!noop_lead.empty()) {
    c.lead_calibrated = true;
    std::tie(c.lead_overhead_ms, c.lead_allowance_ms) = overhead_and_allowance(noop_lead, min_allowance_ms);
  }
  return c;
}

double trusted_bound_ms(const timed_pair& p, const wallclock_calibration& cal) {
  double bound = std::max(0.0, p.candidate_wall_ms - cal.overhead_ms);
  if (cal.lead_calibrated && p.candidate_lead_ms > 0)
    bound += std::max(0.0, p.candidate_lead_ms - cal.lead_overhead_ms - cal.lead_allowance_ms);
  return bound;
}

candidate_timing decide_candidate_latency(const std::vector<timed_pair>& pairs, const wallclock_calibration& cal) {
  candidate_timing out;
  for (const auto& p : pairs) {
    double bound = trusted_bound_ms(p, cal);
    double used = p.candidate_span_ms;
    if (used <= 0) {
      used = bound;
    } else if (bound > used + cal.allowance_ms) {
      used = bound;
      ++out.disagreements;
    }
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

}  // namespace ptxbench::eval
