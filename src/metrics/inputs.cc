#include "metrics/inputs.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "metrics/aggregate.h"

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

}  // namespace

result<loaded_inputs> load_inputs(const input_spec& spec) {
  if (spec.run_dirs.empty() && !spec.upstream_turns)
    return make_error("nothing to read: give one or more RUN_DIRs and/or --import-upstream FILE");
  loaded_inputs in;
  for (const auto& dir : spec.run_dirs) {
    auto run = read_run_dir(dir);
    if (!run) return run.err();
    auto records = run_records(*run);
    in.sources.push_back({{"kind", "run_dir"}, {"path", dir.string()},
                          {"trajectories", run->trajectories.size()}, {"records", records.size()}});
    in.records.insert(in.records.end(), records.begin(), records.end());
    in.runs.push_back(std::move(*run));
  }
  if (spec.upstream_turns) {
    auto records = read_upstream_turns(*spec.upstream_turns, spec.upstream);
    if (!records) return records.err();
    ordered_json src = {{"kind", "upstream"}, {"path", spec.upstream_turns->string()}, {"records", records->size()},
                        {"variant_block", spec.upstream.variant_block}};
    fs::path experiments = spec.upstream_experiments.value_or(spec.upstream_turns->parent_path() / "experiments.csv");
    std::error_code ec;
    if (spec.upstream_experiments || fs::exists(experiments, ec)) {
      auto list = read_upstream_experiments(experiments);
      if (!list) return list.err();
      auto notes = align_with_experiments(*records, *list);
      in.notes.insert(in.notes.end(), notes.begin(), notes.end());
      src["experiments"] = experiments.string();
    }
    in.sources.push_back(src);
    in.records.insert(in.records.end(), std::make_move_iterator(records->begin()), std::make_move_iterator(records->end()));
  }
  return in;
}

result<std::vector<int>> parse_turn_limits(const std::string& text) {
  std::vector<int> out;
  for (auto item : split(text, ',')) {
    auto n = number_from<int>(item);
    if (!n || *n <= 0)
      return make_error(fmt::format("--turn-limits: expected positive integers separated by commas, got '{}'", item));
    out.push_back(*n);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

result<std::vector<double>> parse_p_range(const std::string& text) {
  auto parts = split(text, ':');
  auto bad = [&] { return make_error(fmt::format("--fast-p: expected FROM:TO:STEP such as 0:1.5:0.05, got '{}'", text)); };
  if (parts.size() != 3) return bad();
  auto from = number_from<double>(parts[0]), to = number_from<double>(parts[1]), step = number_from<double>(parts[2]);
  if (!from || !to || !step || *from < 0 || *to < *from || !(*step > 0)) return bad();
  if ((*to - *from) / *step > 10000) return make_error("--fast-p: more than 10001 points; use a larger STEP");
  return p_grid(*from, *to, *step);
}

record_counts count_records(const std::vector<turn_record>& records) {
  record_counts c;
  for (const auto& r : records) (r.counted() ? c.turns : c.infra_errors) += 1;
  return c;
}

}  // namespace ptxbench::metrics
