#include "metrics/trajectory_reader.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/file_io.h"
#include "metrics/run_completeness.h"

namespace ptxbench::metrics {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_max_trajectory_bytes = std::size_t{512} << 20;

// Message content is a string, or (some providers) a list of {"type": "text", "text": ...} parts.
std::string content_text(const ordered_json& msg) {
  if (!msg.contains("content")) return "";
  const auto& c = msg["content"];
  if (c.is_string()) return c.get<std::string>();
  std::string out;
  if (c.is_array())
    for (const auto& part : c)
      if (part.is_object() && part.contains("text") && part["text"].is_string()) out += part["text"].get<std::string>();
  return out;
}

std::string role_of(const ordered_json& msg) {
  return msg.is_object() && msg.contains("role") && msg["role"].is_string() ? msg["role"].get<std::string>() : "";
}

std::optional<family_counts> read_counts(const ordered_json& obj, std::string_view key, const std::string& path,
                                               json_errors& errs) {
  if (!obj.contains(key) || obj[std::string(key)].is_null()) return std::nullopt;
  const auto& c = obj[std::string(key)];
  std::string here = json_child(path, key);
  if (!expect_object(c, here, errs)) return std::nullopt;
  family_counts out;
  for (const auto& item : c.items()) {
    if (!item.value().is_number_integer()) {
      errs.add(json_child(here, item.key()), "expected integer, got " + json_type_name(item.value()));
      continue;
    }
    out[item.key()] = item.value().get<int64_t>();
  }
  return out;
}

// Fills the fields every turn of the trajectory shares, from info.ptxbench.
turn_record read_meta(const ordered_json& j, const std::string& exp_dir, json_errors& errs, int& turn_limit) {
  turn_record base;
  if (!expect_object(j, "", errs)) return base;
  if (!j.contains("info")) { errs.add("info", "missing required field"); return base; }
  const auto& info = j["info"];
  if (!expect_object(info, "info", errs)) return base;
  if (!info.contains("ptxbench")) { errs.add("info.ptxbench", "missing required field"); return base; }
  const auto& p = info["ptxbench"];
  const std::string path = "info.ptxbench";
  if (!expect_object(p, path, errs)) return base;
  base.model = get_string(p, "model", path, errs).value_or("");
  base.definition = get_string(p, "task", path, errs).value_or("");
  base.target = get_string(p, "target", path, errs).value_or("");
  base.arch = get_string(p, "arch", path, errs).value_or("");
  base.variant = get_string(p, "variant", path, errs, true, false).value_or("");
  base.language = get_string(p, "language", path, errs, false).value_or("cuda");
  turn_limit = static_cast<int>(get_int(p, "turn_limit", path, errs).value_or(0));
  get_int(p, "trajectory_index", path, errs);
  if (p.contains("supervision") && !p["supervision"].is_null() && expect_object(p["supervision"], json_child(path, "supervision"), errs))
    base.arm = get_string(p["supervision"], "arm", json_child(path, "supervision"), errs).value_or("base");
  base.exp_dir = exp_dir;
  return base;
}

void read_reply(const ordered_json& msg, const std::string& path, turn_record& r, turn_text& t, json_errors& errs) {
  t.kernel = last_code_block(content_text(msg));
  if (!msg.contains("extra") || msg["extra"].is_null()) return;
  const auto& extra = msg["extra"];
  const std::string xp = json_child(path, "extra");
  if (!expect_object(extra, xp, errs)) return;
  if (extra.contains("usage") && !extra["usage"].is_null()) {
    const auto& u = extra["usage"];
    const std::string up = json_child(xp, "usage");
    if (expect_object(u, up, errs)) {
      r.reasoning_tokens = get_int(u, "reasoning_tokens", up, errs, false);
      r.completion_tokens = get_int(u, "completion_tokens", up, errs, false);
      get_int(u, "prompt_tokens", up, errs, false);
    }
  }
  r.latency_s = get_number(extra, "latency_s", xp, errs, false);
  r.cost_usd = get_number(extra, "cost", xp, errs, false);
}

// The largest known coverage fraction among the verdict's required families
// (target_instructions.coverage, eval/coverage.h); nullopt when none is known.
std::optional<double> best_coverage(const ordered_json& verdict) {
  if (!verdict.contains("target_instructions") || !verdict["target_instructions"].is_object()) return std::nullopt;
  const auto& t = verdict["target_instructions"];
  if (!t.contains("coverage") || !t["coverage"].is_object()) return std::nullopt;
  std::optional<double> best;
  for (const auto& item : t["coverage"].items())
    if (item.value().is_object() && item.value().contains("fraction") && item.value()["fraction"].is_number()) {
      double f = item.value()["fraction"].get<double>();
      if (!best || f > *best) best = f;
    }
  return best;
}

void read_feedback(const ordered_json& msg, const std::string& path, turn_record& r, turn_text& t, json_errors& errs) {
  t.feedback = content_text(msg);
  const std::string xp = json_child(path, "extra");
  if (!msg.contains("extra")) { errs.add(xp, "missing required field"); return; }
  const auto& extra = msg["extra"];
  if (!expect_object(extra, xp, errs)) return;
  auto turn = get_int(extra, "turn", xp, errs);
  if (turn && (*turn < 0 || *turn > 100000)) errs.add(json_child(xp, "turn"), fmt::format("implausible turn {}", *turn));
  r.turn = static_cast<int>(turn.value_or(0));
  const std::string pp = json_child(xp, "ptxbench");
  if (!extra.contains("ptxbench")) { errs.add(pp, "missing required field"); return; }
  const auto& p = extra["ptxbench"];
  if (!expect_object(p, pp, errs)) return;
  auto label = get_string(p, "label", pp, errs);
  if (label) {
    auto parsed = parse_outcome(*label);
    if (!parsed || *parsed == eval_outcome::other_error) {
      std::string list;
      for (auto l : k_all_outcomes)
        if (l != eval_outcome::other_error) list += (list.empty() ? "" : ", ") + std::string(outcome_name(l));
      errs.add(json_child(pp, "label"), fmt::format("unknown label '{}' (expected one of: {})", *label, list));
    } else {
      r.label = *parsed;
    }
    r.source_label = *label;
  }
  r.target_verdict = get_string(p, "target_verdict", pp, errs, false).value_or("");
  if (!r.target_verdict.empty() && !parse_target_verdict(r.target_verdict))
    errs.add(json_child(pp, "target_verdict"), fmt::format("unknown target verdict '{}'", r.target_verdict));
  r.speedup = get_number(p, "speedup", pp, errs, false);
  r.static_counts = read_counts(p, "static_counts", pp, errs);
  r.dynamic_counts = read_counts(p, "dynamic_counts", pp, errs);
  r.target_correct = r.correct() && r.target_verdict == "executed";
  if (auto claimed = get_bool(p, "target_correct", pp, errs, false); claimed && *claimed != r.target_correct)
    errs.add(json_child(pp, "target_correct"),
             fmt::format("is {} but label '{}' with target_verdict '{}' makes it {}", *claimed, r.source_label,
                         r.target_verdict, r.target_correct));
  if (auto passed = get_bool(extra, "all_passed", xp, errs, false); passed && label && *passed != r.correct())
    errs.add(json_child(pp, "label"), fmt::format("'{}' contradicts extra.all_passed = {}", *label, *passed));
  if (p.contains("verdict") && p["verdict"].is_object()) {
    t.summary = p["verdict"].value("message", "");
    r.coverage = best_coverage(p["verdict"]);
  }
}

}  // namespace

std::string last_code_block(const std::string& text) {
  std::vector<std::pair<std::size_t, std::size_t>> fences;  // (start of fence line, start of next line)
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    std::size_t next = eol == std::string::npos ? text.size() : eol + 1;
    std::size_t first = text.find_first_not_of(" \t", pos);
    if (first != std::string::npos && first < next && text.compare(first, 3, "```") == 0) fences.emplace_back(pos, next);
    pos = next;
  }
  if (fences.size() < 2) return text;
  std::size_t close = fences.size() - 1 - (fences.size() % 2);  // fences pair up open/close in order
  std::size_t open = close - 1;
  return text.substr(fences[open].second, fences[close].first - fences[open].second);
}

result<trajectory> trajectory_from_json(const ordered_json& j, const std::string& id, const std::string& exp_dir) {
  json_errors errs;
  trajectory out;
  out.id = id;
  turn_record base = read_meta(j, exp_dir, errs, out.turn_limit);
  if (!errs.empty()) return errs.to_error();
  base.trajectory = id;
  const auto& info = j["info"];
  if (info.contains("exit_status") && info["exit_status"].is_string()) out.exit_status = info["exit_status"].get<std::string>();
  // Where the verdicts came from (informational: a CPU-only or fake-evaluator run is said so in the
  // outputs); absent in older files and in files from other tools.
  if (info.contains("config") && info["config"].is_object() && info["config"].contains("environment") &&
      info["config"]["environment"].is_object()) {
    const auto& env = info["config"]["environment"];
    if (env.contains("run_on_gpu") && env["run_on_gpu"].is_boolean()) out.run_on_gpu = env["run_on_gpu"].get<bool>();
    if (env.contains("evaluator") && env["evaluator"].is_string()) out.evaluator = env["evaluator"].get<std::string>();
  }
  if (!j.contains("messages") || !expect_array(j["messages"], "messages", errs))
    return errs.empty() ? error{"messages: missing required field"} : errs.to_error();
  const auto& msgs = j["messages"];
  std::optional<int> last_counted_turn;
  if (msgs.size() < 2 || role_of(msgs[0]) != "system" || role_of(msgs[1]) != "user")
    return make_error("messages: expected a system message and the task's user message first");
  // After the first two, assistant k sits at 2+2k and its feedback at 3+2k; an optional exit message ends it.
  for (std::size_t i = 2; i < msgs.size(); i += 2) {
    const std::string rp = json_index("messages", i);
    if (role_of(msgs[i]) == "exit" && i + 1 == msgs.size()) break;
    if (role_of(msgs[i]) != "assistant") return make_error(rp + ": expected role 'assistant', got '" + role_of(msgs[i]) + "'");
    if (i + 1 >= msgs.size()) break;  // a reply that was never evaluated (interrupted run): not a turn
    const std::string fp = json_index("messages", i + 1);
    if (role_of(msgs[i + 1]) == "exit") break;
    if (role_of(msgs[i + 1]) != "user") return make_error(fp + ": expected role 'user' (feedback), got '" + role_of(msgs[i + 1]) + "'");
    turn_record r = base;
    turn_text t;
    read_reply(msgs[i], rp, r, t, errs);
    read_feedback(msgs[i + 1], fp, r, t, errs);
    if (!errs.empty()) return errs.to_error();
    if (r.counted()) {
      // Two counted turns with one number would be one turn counted twice.
      if (last_counted_turn && r.turn <= *last_counted_turn)
        return make_error(fmt::format("{}: turn {} follows counted turn {}; counted turns must be numbered upwards "
                                      "(only an infra_error turn repeats a number)",
                                      json_child(json_child(fp, "extra"), "turn"), r.turn, *last_counted_turn));
      last_counted_turn = r.turn;
    }
    out.turns.push_back(std::move(r));
    out.texts.push_back(std::move(t));
  }
  return out;
}

result<run_data> read_run_dir(const fs::path& dir) {
  const fs::path folder = dir / "trajectories";
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    return make_error(fmt::format("{}: not a run directory (no trajectories/ folder inside) nor a Harbor job (no trial "
                                  "folder with agent/ or verifier/ inside)",
                                  dir.string()));
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
  if (ec) return make_error(fmt::format("{}: {}", folder.string(), ec.message()));
  if (files.empty()) return make_error(fmt::format("{}: no *.json trajectory files", folder.string()));
  std::sort(files.begin(), files.end());
  run_data run{dir.string(), {}, {}};
  std::vector<std::string> found;
  std::vector<data_warning> unreadable;
  std::string first_error;
  for (const auto& f : files) {
    found.push_back((fs::path("trajectories") / f.filename()).string());
    // Reading and parsing apart from interpreting: a file we cannot read is missing data (warned
    // about), a file we read but that contradicts itself is wrong data (refused).
    auto text = read_text_file(f, k_max_trajectory_bytes);
    auto j = text ? parse_json(*text, f.string()) : result<ordered_json>(text.err());
    if (!j) {
      if (first_error.empty()) first_error = j.err().message;
      std::string why = j.err().message;  // usually "<file>: <problem>"; the file is named once
      if (why.rfind(f.string() + ": ", 0) == 0) why.erase(0, f.string().size() + 2);
      unreadable.push_back({warning_kind::unreadable_trajectory, f.string(),
                            fmt::format("{}: unreadable ({}); skipped, its turns are not counted", f.string(), why)});
      continue;
    }
    auto t = trajectory_from_json(*j, f.stem().string(), run.dir);
    if (!t) return t.err().with_context(f.string());
    t->file = f.string();
    run.trajectories.push_back(std::move(*t));
  }
  if (run.trajectories.empty())
    return make_error(fmt::format("{}: none of its {} trajectory files could be read (first: {})", folder.string(),
                                  files.size(), first_error));
  run.warnings = plan_warnings(dir, found);
  run.warnings.insert(run.warnings.end(), unreadable.begin(), unreadable.end());
  for (const auto& t : run.trajectories)
    if (auto w = unfinished_warning(t)) run.warnings.push_back(std::move(*w));
  return run;
}

std::vector<turn_record> run_records(const run_data& run) {
  std::vector<turn_record> out;
  for (const auto& t : run.trajectories) out.insert(out.end(), t.turns.begin(), t.turns.end());
  return out;
}

}  // namespace ptxbench::metrics
