#include "adapt/run_dir.h"

#include <fmt/format.h>

#include "adapt/mined_row.h"
#include "core/file_io.h"
#include "core/sha256.h"

namespace ptxbench::adapt {
namespace fs = std::filesystem;

result<run_directory> read_run_directory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error(fmt::format("{}: no such run directory", dir.string()));
  fs::path abs = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  fs::path plan_path = abs / "plan.json";
  if (!fs::is_regular_file(plan_path, ec))
    return make_error(fmt::format("{}: not a `ptxbench run` directory (no plan.json; written by another tool?)", dir.string()));
  auto text = read_text_file(plan_path, 64u << 20);
  if (!text) return text.err();
  auto plan = parse_json(*text, plan_path.string());
  if (!plan) return plan.err();
  if (!plan->is_object() || plan->value("format", "") != "ptxbench.run-plan/1" || !(*plan)["plan"].is_array())
    return make_error(fmt::format("{}: not a `ptxbench run` plan (format is not \"ptxbench.run-plan/1\")", plan_path.string()));
  run_directory run;
  run.dir = abs.string();
  run.name = file_safe(abs.filename().string());
  run.plan_sha256 = sha256_hex(*text);
  run.plan = std::move(*plan);
  for (const auto& item : run.plan["plan"]) {
    if (!item.is_object() || !item.contains("file") || !item["file"].is_string())
      return make_error(fmt::format("{}: a plan item has no \"file\"", plan_path.string()));
    run_trajectory rt;
    rt.plan_item = item;
    fs::path file = abs / item["file"].get<std::string>();
    rt.file = file.string();
    if (fs::exists(file, ec)) {
      auto bytes = read_file(file, std::size_t{512} << 20);
      if (!bytes) return bytes.err();
      rt.sha256 = sha256_hex(*bytes);
      auto t = agent::trajectory::load(file);
      if (!t) return t.err();
      rt.t = std::move(*t);
    }
    run.trajectories.push_back(std::move(rt));
  }
  return run;
}

const ordered_json& turn_extra(const agent::trajectory& t, int turn) {
  static const ordered_json empty = ordered_json::object();
  const auto& msgs = t.json()["messages"];
  std::size_t i = 3 + 2 * static_cast<std::size_t>(turn);
  if (i >= msgs.size() || !msgs[i].contains("extra") || !msgs[i]["extra"].is_object()) return empty;
  const auto& extra = msgs[i]["extra"];
  return extra.contains("ptxbench") && extra["ptxbench"].is_object() ? extra["ptxbench"] : empty;
}

std::string error_log_of(const ordered_json& feedback) {
  if (feedback.contains("extra") && feedback["extra"].is_object() && feedback["extra"].contains("raw_output") &&
      feedback["extra"]["raw_output"].is_string())
    return feedback["extra"]["raw_output"].get<std::string>();
  std::string content = feedback.value("content", "");
  auto open = content.find("<output>");
  auto close = content.rfind("</output>");
  if (open == std::string::npos || close == std::string::npos || close < open) return content;
  open += 8;
  if (open < content.size() && content[open] == '\n') ++open;
  return content.substr(open, close - open);
}

}  // namespace ptxbench::adapt
