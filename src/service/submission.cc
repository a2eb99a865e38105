#include "service/submission.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/sha1.h"
#include "eval/triton_stages.h"
#include "suite/binding.h"

namespace ptxbench::service {
namespace {

using queue::job_kind;

/// A source is text: no NUL and no control characters other than tab, newline, carriage return,
/// form feed and vertical tab (JSON has already guaranteed valid UTF-8).
bool is_binary(const std::string& content) {
  for (unsigned char c : content)
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return true;
  return false;
}

/// A field that must be null/absent or of the given kind; records the error otherwise.
bool optional_of(const ordered_json& body, const char* key, bool (ordered_json::*is)() const noexcept, const char* what,
                 json_errors& errs) {
  auto it = body.find(key);
  if (it == body.end() || it->is_null()) return false;
  if (!((*it).*is)()) {
    errs.add(key, fmt::format("expected {} or null, got {}", what, json_type_name(*it)));
    return false;
  }
  return true;
}

std::string canonical_target(const std::string& name) {
  std::string out;
  for (char c : name) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string upstream_solution_hash(const solution& s) {
  std::string text = s.definition + s.spec.language + s.spec.entry_point + (s.spec.binding ? *s.spec.binding : "");
  for (const auto& d : s.spec.dependencies) text += d;
  for (const auto& f : s.sources) text += f.path + f.content;
  return sha1_hex(text);
}

std::string normalized_solution_name(const solution& s) { return s.name + "_" + upstream_solution_hash(s).substr(0, 8); }

result<submission> parse_submission(std::string_view text, job_kind kind, const suite& tasks,
                                    const std::string& default_target, const submission_limits& limits) {
  auto body = ordered_json::parse(text, nullptr, false);
  if (body.is_discarded()) return make_error("the request body is not valid JSON");
  if (!body.is_object()) return make_error(fmt::format("the request body must be a JSON object, got {}", json_type_name(body)));
  if (!body.contains("solution") || body["solution"].is_null()) return make_error("solution: missing required field");

  auto sol = solution_from_json(body["solution"], "solution");
  if (!sol) return sol.err();
  const task* t = tasks.find_task(sol->definition);
  if (!t) return make_error("Definition not found: " + sol->definition);
  if (sol->spec.language != "cuda" && sol->spec.language != "cpp" && !eval::is_triton(*sol))
    return make_error(
        fmt::format("solution.spec.language: '{}' is not supported here (cuda, cpp or triton)", sol->spec.language));
  // A Triton candidate is Python: no native binding (docs/kernel-abi.md, "Triton candidates").
  if (!eval::is_triton(*sol))
    if (auto b = binding_of(*sol); !b) return b.err().with_context("solution.spec.binding");
  if (sol->sources.size() > limits.max_sources)
    return make_error(fmt::format("solution.sources: {} files, more than the limit of {}", sol->sources.size(), limits.max_sources));
  std::size_t total = 0;
  for (std::size_t i = 0; i < sol->sources.size(); ++i) {
    const auto& f = sol->sources[i];
    if (f.content.empty()) return make_error(fmt::format("solution.sources[{}].content: expected a non-empty string", i));
    if (is_binary(f.content))
      return make_error(fmt::format("solution.sources[{}].content: '{}' is binary (NUL or control characters); sources must be text", i, f.path));
    total += f.content.size();
  }
  if (total > limits.max_source_bytes)
    return make_error(fmt::format("solution.sources: {} bytes in all, more than the limit of {} bytes", total, limits.max_source_bytes));

  json_errors errs;
  submission out;
  out.spec.kind = kind;
  out.spec.task = t->name;
  ordered_json protocol = ordered_json::object();

  // PTXBench's own fields.
  std::string target = default_target;
  if (optional_of(body, "target", &ordered_json::is_string, "a string", errs)) target = canonical_target(body["target"].get<std::string>());
  bool check_only = false;
  if (optional_of(body, "check_only", &ordered_json::is_boolean, "a boolean", errs)) check_only = body["check_only"].get<bool>();
  for (const char* key : {"cache", "baseline_cache_mode"})
    if (optional_of(body, key, &ordered_json::is_string, "\"reuse\" or \"bypass\"", errs)) {
      auto mode = body[key].get<std::string>();
      if (mode != "reuse" && mode != "bypass") errs.add(key, fmt::format("expected \"reuse\" or \"bypass\", got \"{}\"", mode));
      out.bypass_cache = out.bypass_cache || mode == "bypass";
    }
  if (optional_of(body, "request_id", &ordered_json::is_string, "a string", errs)) {
    out.request_id = body["request_id"].get<std::string>();
    bool printable = std::all_of(out.request_id.begin(), out.request_id.end(),
                                 [](unsigned char c) { return c >= 0x20 && c < 0x7f; });
    if (out.request_id.empty() || out.request_id.size() > 200 || !printable)
      errs.add("request_id", "expected 1 to 200 printable ASCII characters");
  }
  // Upstream's fields. workload_uuids: null = every workload of the definition.
  if (optional_of(body, "workload_uuids", &ordered_json::is_array, "an array of strings", errs)) {
    std::set<std::string> seen;
    for (const auto& w : body["workload_uuids"]) {
      if (!w.is_string()) {
        errs.add("workload_uuids", "expected an array of strings");
        break;
      }
      auto uuid = w.get<std::string>();
      if (uuid != t->wl.uuid) {
        errs.add("workload_uuids", fmt::format("Workload not found for definition {}: {}", t->name, uuid));
        break;
      }
      if (seen.insert(uuid).second) out.spec.workloads.push_back(uuid);
    }
  }
  if (optional_of(body, "timeout", &ordered_json::is_number, "a number", errs)) {
    double timeout = body["timeout"].get<double>();
    if (!(timeout > 0) || timeout > 3600) errs.add("timeout", "expected a number of seconds in (0, 3600]");
    else protocol["timeout"] = timeout;
  }
  if (kind == job_kind::evaluate) {
    for (const char* key : {"atol", "rtol"})
      if (optional_of(body, key, &ordered_json::is_number, "a number", errs)) {
        double v = body[key].get<double>();
        if (!(v >= 0) || v > 1e6) errs.add(key, "expected a number >= 0");
        else protocol[key] = v;
      }
    for (const char* key : {"profile_baseline", "run_baseline"})
      (void)optional_of(body, key, &ordered_json::is_boolean, "a boolean", errs);  // accepted; the baseline always runs
  }
  if (kind == job_kind::sanitize &&
      optional_of(body, "sanitizer_types", &ordered_json::is_array, "an array of strings", errs)) {
    static const std::set<std::string> known = {"memcheck", "racecheck", "synccheck", "initcheck"};
    std::set<std::string> types;
    for (const auto& s : body["sanitizer_types"]) {
      if (!s.is_string() || !known.count(s.get<std::string>())) {
        errs.add("sanitizer_types", "expected a list of memcheck, racecheck, synccheck, initcheck");
        break;
      }
      types.insert(s.get<std::string>());
    }
    if (!types.empty()) protocol["sanitizer_types"] = std::vector<std::string>(types.begin(), types.end());
  }
  if (!errs.empty()) return errs.to_error();

  const target_info* tgt = tasks.find_target(target);
  if (!tgt) {
    std::vector<std::string> names;
    for (const auto& [name, info] : tasks.targets) names.push_back(name);
    return make_error("target: " + unknown_name_message("target", target, names, "expected one of the suite's targets"));
  }
  if (std::find(t->targets.begin(), t->targets.end(), tgt->name) == t->targets.end())
    return make_error(fmt::format("target: definition {} does not list target {}", t->name, tgt->name));
  if (!check_only && t->status != "ready")
    return make_error(fmt::format("Definition {} cannot be evaluated on a GPU yet: {} (check_only: true runs the CPU stages)",
                                  t->name, t->note.empty() ? "its reference is pending" : t->note));
  if (check_only) protocol["check_only"] = true;

  out.spec.target = tgt->name;
  out.normalized_solution_name = normalized_solution_name(*sol);
  out.candidate = std::move(*sol);
  out.candidate.name = out.normalized_solution_name;
  out.spec.solution_json = to_json(out.candidate).dump();
  out.spec.protocol_json = protocol.dump();
  return out;
}

result<protocol_options> read_protocol(const std::string& protocol_json) {
  auto j = ordered_json::parse(protocol_json.empty() ? std::string("{}") : protocol_json, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return make_error("the job's protocol options are not a JSON object");
  protocol_options o;
  try {
    if (j.contains("atol")) o.atol = j["atol"].get<double>();
    if (j.contains("rtol")) o.rtol = j["rtol"].get<double>();
    if (j.contains("timeout")) o.timeout_s = j["timeout"].get<double>();
    if (j.contains("sanitizer_types")) o.sanitizer_types = j["sanitizer_types"].get<std::vector<std::string>>();
    o.check_only = j.value("check_only", false);
  } catch (const std::exception& e) {
    return make_error(std::string("the job's protocol options are malformed: ") + e.what());
  }
  return o;
}

}  // namespace ptxbench::service
