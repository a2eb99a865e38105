#include "metrics/inputs.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "metrics/aggregate.h"
#include "metrics/harbor_runs.h"

namespace ptxbench::metrics {
namespace fs = std::filesystem;
namespace {

template <typename T>
std::optional<T> number_from(std::string_view s) {
  T v{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t pos = 0;;) {
    std::size_t next = s.find(sep, pos);
    out.push_back(s.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos));
    if (next == std::string_view::npos) break;
    pos = next + 1;
  }
  return out;
}

// Nothing of the run ran on a GPU: its environment says so, or (older files without one) a turn is
// labelled `built`, which only a CPU-only evaluation gives.
bool is_cpu_only(const run_data& run) {
  bool any_built = false, known = false, on_gpu = false;
  for (const auto& t : run.trajectories) {
    if (t.run_on_gpu) { known = true; on_gpu = on_gpu || *t.run_on_gpu; }
    for (const auto& r : t.turns) any_built = any_built || r.label == eval_outcome::built;
  }
  return known ? !on_gpu : any_built;
}

bool is_fake_evaluated(const run_data& run) {
  return std::any_of(run.trajectories.begin(), run.trajectories.end(),
                     [](const trajectory& t) { return t.evaluator == "fake"; });
}

// The directory an earlier argument already named (by any path), or nullopt.
std::optional<fs::path> same_directory(const std::vector<fs::path>& read, const fs::path& dir) {
  for (const auto& earlier : read) {
    std::error_code ec;
    if (fs::equivalent(earlier, dir, ec) && !ec) return earlier;
  }
  return std::nullopt;
}

}  // namespace

result<loaded_inputs> load_inputs(const input_spec& spec) {
  if (spec.run_dirs.empty() && !spec.upstream_turns)
    return make_error("nothing to read: give one or more RUN_DIRs and/or --import-upstream FILE");
  loaded_inputs in;
  std::vector<fs::path> read_dirs;
  for (const auto& dir : spec.run_dirs) {
    if (auto earlier = same_directory(read_dirs, dir)) {
      in.warnings.push_back({warning_kind::repeated_run_dir, dir.string(),
                             fmt::format("{}: the same run directory as {}, given again; read once", dir.string(),
                                         earlier->string())});
      continue;
    }
    // A `ptxbench run` directory, or a Harbor job of exported tasks (coding agents, metrics/harbor_runs.h).
    const bool harbor = is_harbor_run(dir);
    auto run = harbor ? read_harbor_run(dir) : read_run_dir(dir);
    if (!run) return run.err();
    read_dirs.push_back(dir);
    auto records = run_records(*run);
    ordered_json src = {{"kind", harbor ? "harbor_job" : "run_dir"}, {"path", dir.string()},
                        {"trajectories", run->trajectories.size()}, {"records", records.size()},
                        {"warnings", run->warnings.size()}};
    if (is_cpu_only(*run)) {
      src["cpu_only"] = true;
      in.cpu_only_runs.push_back(run->dir);
      in.notes.push_back(fmt::format(
          "{}: nothing ran on a GPU (`ptxbench run --cpu-only`): a turn that compiles is labelled 'built' and never "
          "counts as correct, so its correctness rates are 0 and it has no speedups",
          run->dir));
    }
    if (is_fake_evaluated(*run)) {
      src["evaluator"] = "fake";
      in.fake_evaluator_runs.push_back(run->dir);
      in.notes.push_back(fmt::format(
          "{}: judged by the test-only fake evaluator (`--evaluator fake`); its verdicts are made up", run->dir));
    }
    in.sources.push_back(std::move(src));
    in.warnings.insert(in.warnings.end(), run->warnings.begin(), run->warnings.end());
    in.records.insert(in.records.end(), records.begin(), records.end());
    in.runs.push_back(std::move(*run));
  }
  if (spec.upstream_turns) {
    auto turns = read_upstream_turns(*spec.upstream_turns, spec.upstream);
    if (!turns) return turns.err();
    auto& records = turns->records;
    in.warnings.insert(in.warnings.end(), turns->warnings.begin(), turns->warnings.end());
    ordered_json src = {{"kind", "upstream"}, {"path", spec.upstream_turns->string()}, {"records", records.size()},
                        {"variant_block", spec.upstream.variant_block}};
    fs::path experiments = spec.upstream_experiments.value_or(spec.upstream_turns->parent_path() / "experiments.csv");
    std::error_code ec;
    if (spec.upstream_experiments || fs::exists(experiments, ec)) {
      auto list = read_upstream_experiments(experiments);
      if (!list) return list.err();
      auto mismatches = align_with_experiments(records, *list);
      in.warnings.insert(in.warnings.end(), mismatches.begin(), mismatches.end());
      src["experiments"] = experiments.string();
    }
    in.sources.push_back(src);
    in.records.insert(in.records.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
  }
  return in;
}

int largest_turn_limit(const std::vector<int>& turn_limits) {
  return turn_limits.empty() ? 8 : *std::max_element(turn_limits.begin(), turn_limits.end());
}

result<std::vector<int>> parse_turn_limits(const std::string& text) {
  std::vector<int> out;
  for (auto item : split(text, ',')) {
    auto n = number_from<int64_t>(item);
    if (!n || *n <= 0)
      return make_error(fmt::format("--turn-limits: expected positive integers separated by commas, got '{}'", item));
    if (*n > k_max_turn_limit)
      return make_error(fmt::format("--turn-limits: {} is more turns than a trajectory can have (at most {})", *n,
                                    k_max_turn_limit));
    out.push_back(static_cast<int>(*n));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  if (out.size() > 100) return make_error(fmt::format("--turn-limits: at most 100 limits, got {}", out.size()));
  return out;
}

result<std::vector<double>> parse_p_range(const std::string& text) {
  auto parts = split(text, ':');
  if (parts.size() != 3)
    return make_error(fmt::format("--fast-p: expected FROM:TO:STEP such as 0:1.5:0.05, got '{}'", text));
  const char* names[] = {"FROM", "TO", "STEP"};
  double v[3];
  for (int i = 0; i < 3; ++i) {
    auto n = number_from<double>(parts[i]);
    // from_chars reads "nan" and "inf": refuse them here, or the grid below never ends.
    if (!n || !std::isfinite(*n))
      return make_error(fmt::format("--fast-p: {} must be a finite number, got '{}' in '{}'", names[i], parts[i], text));
    v[i] = *n;
  }
  const double from = v[0], to = v[1], step = v[2];
  if (from < 0) return make_error(fmt::format("--fast-p: FROM must be at least 0 (p is a speedup), got '{}'", text));
  if (to < from) return make_error(fmt::format("--fast-p: TO must not be below FROM, got '{}'", text));
  if (to > 1e6) return make_error(fmt::format("--fast-p: TO must be at most 1000000 (a speedup), got '{}'", text));
  // The grid is rounded to 1e-9; a smaller step would repeat points.
  if (!(step >= 1e-9)) return make_error(fmt::format("--fast-p: STEP must be at least 1e-9, got '{}'", text));
  if ((to - from) / step > 10000)
    return make_error(fmt::format("--fast-p: '{}' makes more than 10001 points; use a larger STEP", text));
  return p_grid(from, to, step);
}

result<std::optional<double>> parse_min_coverage(const std::string& text) {
  if (text.empty()) return std::optional<double>();
  auto n = number_from<double>(text);
  if (!n || !std::isfinite(*n) || *n < 0 || *n > 1)
    return make_error(fmt::format("--min-coverage: expected a share from 0 to 1 (0.9 = 90%), got '{}'", text));
  return std::optional<double>(*n);
}

result<int> parse_variant_block(const std::string& text) {
  auto n = number_from<int>(text);
  if (!n || *n < 0 || *n > 1000)
    return make_error(fmt::format("--variant-block: expected a whole number from 0 to 1000, got '{}'", text));
  return *n;
}

record_counts count_records(const std::vector<turn_record>& records) {
  record_counts c;
  for (const auto& r : records) (r.counted() ? c.turns : c.infra_errors) += 1;
  return c;
}

}  // namespace ptxbench::metrics
