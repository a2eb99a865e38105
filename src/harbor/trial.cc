#include "harbor/trial.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/file_io.h"
#include "core/text.h"
#include "harbor/verifier_script.h"

namespace ptxbench::harbor {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t k_max_json_bytes = std::size_t{512} << 20;
constexpr std::size_t k_max_kernel_bytes = std::size_t{16} << 20;

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// A JSON file that may be absent. nullopt: absent or unreadable (then noted in `unreadable`).
std::optional<ordered_json> optional_json(const fs::path& file, std::vector<std::string>& unreadable) {
  if (!path_exists(file)) return std::nullopt;
  auto text = read_text_file(file, k_max_json_bytes);
  auto j = text ? parse_json(*text, file.string()) : result<ordered_json>(text.err());
  if (!j) {
    unreadable.push_back(j.err().message);
    return std::nullopt;
  }
  return std::move(*j);
}

std::string string_at(const ordered_json& j, std::initializer_list<const char*> path) {
  const ordered_json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return "";
    at = &(*at)[key];
  }
  return at->is_string() ? at->get<std::string>() : "";
}

// Harbor's TrialResult and TrialConfig: only the fields PTXBench uses, each read where it has the
// expected type (the rest of their schema is Harbor's business).
void read_harbor_files(const fs::path& dir, trial& t) {
  if (auto r = optional_json(dir / "result.json", t.unreadable)) {
    t.task_name = string_at(*r, {"task_name"});
    t.agent = string_at(*r, {"agent_info", "name"});
    t.agent_version = string_at(*r, {"agent_info", "version"});
    t.model = string_at(*r, {"agent_info", "model_info", "name"});
    const std::string provider = string_at(*r, {"agent_info", "model_info", "provider"});
    if (!provider.empty() && !t.model.empty() && !starts_with(t.model, provider + "/")) t.model = provider + "/" + t.model;
    const std::string type = string_at(*r, {"exception_info", "exception_type"});
    if (!type.empty()) t.exception = type + ": " + string_at(*r, {"exception_info", "exception_message"});
  }
  if (auto c = optional_json(dir / "config.json", t.unreadable)) {
    if (t.agent.empty()) t.agent = string_at(*c, {"agent", "name"});
    if (t.model.empty()) t.model = string_at(*c, {"agent", "model_name"});
  }
}

result<std::optional<double>> read_reward(const fs::path& file) {
  if (!path_exists(file)) return std::optional<double>();
  auto text = read_file(file, 4096);
  if (!text) return text.err();
  const std::string_view s = trim(*text);
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    return make_error(fmt::format("{}: expected a number, got '{}'", file.string(), std::string(s.substr(0, 40))));
  return std::optional<double>(v);
}

}  // namespace

result<verifier_summary> verifier_summary_from_json(const ordered_json& j) {
  json_errors errs;
  verifier_summary s;
  if (!expect_object(j, "", errs)) return errs.to_error();
  auto format = get_string(j, "format", "", errs);
  if (format && *format != k_summary_format)
    return make_error(fmt::format("format: '{}' is not '{}'", *format, k_summary_format));
  s.task = get_string(j, "task", "", errs).value_or("");
  s.target = get_string(j, "target", "", errs).value_or("");
  s.variant = get_string(j, "variant", "", errs).value_or("");
  s.arch = get_string(j, "arch", "", errs, false).value_or("");
  s.kernel_state = get_string(j, "kernel_state", "", errs).value_or("");
  if (!j.contains("outcome") || !j["outcome"].is_null()) s.outcome = get_string(j, "outcome", "", errs).value_or("");
  s.target_correct = get_bool(j, "target_correct", "", errs).value_or(false);
  if (!j.contains("reward")) errs.add("reward", "missing required field");
  else if (!j["reward"].is_null()) {
    auto r = get_int(j, "reward", "", errs);
    if (r && *r != 0 && *r != 1) errs.add("reward", fmt::format("expected 0, 1 or null, got {}", *r));
    if (r) s.reward = static_cast<int>(*r);
  }
  s.speedup = get_number(j, "speedup", "", errs, false);
  if (auto code = get_int(j, "exit_code", "", errs, false)) s.exit_code = static_cast<int>(*code);
  s.message = get_string(j, "message", "", errs, false, false).value_or("");
  const std::vector<std::string> states = {"present", "missing", "empty", "too_large", "not_text"};
  if (errs.empty() && std::find(states.begin(), states.end(), s.kernel_state) == states.end())
    errs.add("kernel_state", fmt::format("unknown state '{}'", s.kernel_state));
  if (!errs.empty()) return errs.to_error();
  return s;
}

bool is_trial_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_directory(dir / "verifier", ec) || fs::is_directory(dir / "agent", ec);
}

result<std::vector<fs::path>> trial_dirs(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return make_error(fmt::format("{}: no such folder", dir.string()));
  if (is_trial_dir(dir)) return std::vector<fs::path>{dir};
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && is_trial_dir(e.path())) out.push_back(e.path());
  if (ec) return make_error(fmt::format("{}: {}", dir.string(), ec.message()));
  if (out.empty())
    return make_error(fmt::format("{}: not a Harbor job directory (no trial folder with agent/ or verifier/ inside)",
                                  dir.string()));
  std::sort(out.begin(), out.end());
  return out;
}

result<trial> read_trial(const fs::path& dir) {
  trial t;
  t.dir = dir;
  t.name = dir.filename().string();
  if (t.name.empty()) t.name = dir.parent_path().filename().string();  // "job/trial/"
  read_harbor_files(dir, t);
  const fs::path verifier = dir / "verifier";
  auto reward = read_reward(verifier / "reward.txt");
  if (!reward) return reward.err();
  t.reward = *reward;
  if (auto j = optional_json(verifier / k_summary_file, t.unreadable)) {
    auto s = verifier_summary_from_json(*j);
    if (!s) return s.err().with_context((verifier / k_summary_file).string());
    t.summary = std::move(*s);
  }
  if (auto j = optional_json(verifier / k_verdict_file, t.unreadable)) {
    if (!j->is_object() || j->value("format", "") != "ptxbench.verdict/1")
      return make_error(fmt::format("{}: not a ptxbench verdict (expected \"format\": \"ptxbench.verdict/1\")",
                                    (verifier / k_verdict_file).string()));
    t.final_verdict = std::move(*j);
  }
  if (path_exists(verifier / "kernel.cu")) {
    auto k = read_text_file(verifier / "kernel.cu", k_max_kernel_bytes);
    if (k) t.final_kernel = std::move(*k);
    else t.unreadable.push_back(k.err().message);
  }
  const fs::path atif = dir / "agent" / "trajectory.json";
  if (path_exists(atif)) {
    auto text = read_text_file(atif, k_max_json_bytes);
    auto j = text ? parse_json(*text, atif.string()) : result<ordered_json>(text.err());
    if (!j) t.unreadable.push_back(j.err().message);
    else {
      auto a = atif_from_json(*j);
      if (!a) return a.err().with_context(atif.string());
      t.trajectory = std::move(*a);
    }
  }
  if (t.trajectory) {
    if (t.agent.empty()) t.agent = t.trajectory->agent_name;
    if (t.agent_version.empty()) t.agent_version = t.trajectory->agent_version;
    if (t.model.empty()) t.model = t.trajectory->model_name;
  }
  return t;
}

}  // namespace ptxbench::harbor
