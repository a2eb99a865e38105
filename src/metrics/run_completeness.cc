#include "metrics/run_completeness.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/file_io.h"

namespace ptxbench::metrics {
namespace fs = std::filesystem;
namespace {

// info.exit_status values that end a trajectory for good (docs/trajectory-format.md; the agent's
// exit_names). Spelled out here because metrics reads files and does not link the agent.
constexpr std::string_view k_submitted = "Submitted";
constexpr std::string_view k_limits_exceeded = "LimitsExceeded";
constexpr std::string_view k_context_exceeded = "ContextWindowExceeded";

constexpr std::size_t k_max_plan_bytes = std::size_t{64} << 20;

data_warning no_plan(const fs::path& dir, const std::string& why) {
  return {warning_kind::no_plan, (dir / "plan.json").string(),
          fmt::format("{}: {}; trajectories missing from this run cannot be detected", (dir / "plan.json").string(), why)};
}

}  // namespace

std::optional<data_warning> unfinished_warning(const trajectory& t) {
  const auto counted = std::count_if(t.turns.begin(), t.turns.end(), [](const turn_record& r) { return r.counted(); });
  const std::string& s = t.exit_status;
  if (s == k_submitted || s == k_context_exceeded) return std::nullopt;
  if ((s == k_limits_exceeded || s.empty()) && counted >= t.turn_limit) return std::nullopt;
  const std::string file = t.file.empty() ? t.id : t.file;
  const std::string status = s.empty() ? "no exit status" : "exit status " + s;
  return data_warning{warning_kind::unfinished_trajectory, file,
                      fmt::format("{}: unfinished ({}, {} of {} turns); re-run the same `ptxbench run` command to "
                                  "finish it",
                                  file, status, counted, t.turn_limit)};
}

std::vector<data_warning> plan_warnings(const fs::path& dir, const std::vector<std::string>& files_found) {
  const fs::path plan_path = dir / "plan.json";
  std::error_code ec;
  if (!fs::exists(plan_path, ec)) return {no_plan(dir, "missing")};
  auto text = read_text_file(plan_path, k_max_plan_bytes);
  if (!text) return {no_plan(dir, "unreadable (" + text.err().message + ")")};
  auto plan = parse_json(*text, plan_path.string());
  if (!plan) return {no_plan(dir, "unreadable (" + plan.err().message + ")")};
  const auto& j = *plan;
  const std::string format = j.is_object() && j.contains("format") && j["format"].is_string() ? j["format"].get<std::string>() : "";
  if (format != "ptxbench.run-plan/1")
    return {no_plan(dir, fmt::format("format is '{}', not 'ptxbench.run-plan/1'", format))};
  if (!j.contains("plan") || !j["plan"].is_array()) return {no_plan(dir, "no 'plan' list")};
  std::vector<std::string> planned_order;  // plan order, for the messages
  std::set<std::string> planned;
  for (const auto& item : j["plan"]) {
    if (!item.is_object() || !item.contains("file") || !item["file"].is_string())
      return {no_plan(dir, "a 'plan' item without a 'file'")};
    if (planned.insert(item["file"].get<std::string>()).second) planned_order.push_back(item["file"].get<std::string>());
  }
  std::vector<data_warning> out;
  const std::set<std::string> found(files_found.begin(), files_found.end());
  for (const auto& f : planned_order)
    if (!found.count(f))
      out.push_back({warning_kind::missing_trajectory, (dir / f).string(),
                     fmt::format("{}: planned in plan.json but missing (its turns are not counted)", (dir / f).string())});
  for (const auto& f : files_found)
    if (!planned.count(f))
      out.push_back({warning_kind::unplanned_trajectory, (dir / f).string(),
                     fmt::format("{}: not in plan.json (a file from another run?); its turns are counted",
                                 (dir / f).string())});
  return out;
}

}  // namespace ptxbench::metrics
