#include "suite/trace.h"

#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <limits>

#include <fmt/format.h>

namespace ptxbench {
namespace {
constexpr std::array<std::string_view, 7> k_status_names = {
    "PASSED", "INCORRECT_SHAPE", "INCORRECT_NUMERICAL", "INCORRECT_DTYPE", "RUNTIME_ERROR", "COMPILE_ERROR", "TIMEOUT"};
}

std::string_view status_name(eval_status s) { return k_status_names[static_cast<std::size_t>(s)]; }

std::optional<eval_status> parse_status(std::string_view name) {
  for (std::size_t i = 0; i < k_status_names.size(); ++i)
    if (k_status_names[i] == name) return static_cast<eval_status>(i);
  return std::nullopt;
}

ordered_json finite_or_string(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

std::string utc_timestamp() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

namespace {

std::optional<double> read_error_value(const ordered_json& obj, const char* key, const std::string& path,
                                       json_errors& errs) {
  std::string here = json_child(path, key);
  if (!obj.contains(key)) { errs.add(here, "missing required field"); return std::nullopt; }
  const auto& v = obj[key];
  if (v.is_number()) {
    double d = v.get<double>();
    if (d < 0) errs.add(here, "expected a value >= 0");
    return d;
  }
  if (v.is_string()) {
    auto s = v.get<std::string>();
    if (s == "NaN" || s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity" || s == "inf") return std::numeric_limits<double>::infinity();
  }
  errs.add(here, "expected a number >= 0, \"NaN\" or \"Infinity\"");
  return std::nullopt;
}

}  // namespace

status check_evaluation_blocks(const evaluation& e, const std::string& path) {
  auto name = std::string(status_name(e.status));
  if (e.status == eval_status::PASSED) {
    if (!e.correctness) return make_error(fmt::format("{}.correctness: required when status is PASSED", path));
    if (!e.performance) return make_error(fmt::format("{}.performance: required when status is PASSED", path));
  } else if (e.status == eval_status::INCORRECT_NUMERICAL) {
    if (!e.correctness) return make_error(fmt::format("{}.correctness: required when status is {}", path, name));
    if (e.performance) return make_error(fmt::format("{}.performance: not allowed when status is {}", path, name));
  } else {
    if (e.correctness) return make_error(fmt::format("{}.correctness: not allowed when status is {}", path, name));
    if (e.performance) return make_error(fmt::format("{}.performance: not allowed when status is {}", path, name));
  }
  return ok();
}

result<evaluation> evaluation_from_json(const ordered_json& j, const std::string& path) {
  json_errors errs;
  if (!expect_object(j, path, errs)) return errs.to_error();
  reject_unknown_keys(j, {"status", "environment", "timestamp", "log", "correctness", "performance"}, path, errs);
  evaluation e;
  if (auto s = get_string(j, "status", path, errs)) {
    if (auto parsed = parse_status(*s)) e.status = *parsed;
    else errs.add(json_child(path, "status"), fmt::format("unknown status \"{}\"", *s));
  }
  std::string env_path = json_child(path, "environment");
  if (!j.contains("environment")) {
    errs.add(env_path, "missing required field");
  } else if (expect_object(j["environment"], env_path, errs)) {
    const auto& ej = j["environment"];
    reject_unknown_keys(ej, {"hardware", "libs"}, env_path, errs);
    e.environment.hardware = get_string(ej, "hardware", env_path, errs, true, false).value_or("");
    if (ej.contains("libs") && expect_object(ej["libs"], json_child(env_path, "libs"), errs))
      for (const auto& item : ej["libs"].items()) {
        if (item.value().is_string()) e.environment.libs[item.key()] = item.value().get<std::string>();
        else errs.add(json_child(json_child(env_path, "libs"), item.key()), "expected string");
      }
  }
  e.timestamp = get_string(j, "timestamp", path, errs).value_or("");
  e.log = get_string(j, "log", path, errs, false, false).value_or("");
  if (j.contains("correctness") && !j["correctness"].is_null()) {
    std::string cp = json_child(path, "correctness");
    if (expect_object(j["correctness"], cp, errs)) {
      const auto& cj = j["correctness"];
      reject_unknown_keys(cj, {"max_relative_error", "max_absolute_error", "extra"}, cp, errs);
      correctness_info c;
      c.max_relative_error = read_error_value(cj, "max_relative_error", cp, errs).value_or(0);
      c.max_absolute_error = read_error_value(cj, "max_absolute_error", cp, errs).value_or(0);
      if (cj.contains("extra")) c.extra = cj["extra"];
      e.correctness = c;
    }
  }
  if (j.contains("performance") && !j["performance"].is_null()) {
    std::string pp = json_child(path, "performance");
    if (expect_object(j["performance"], pp, errs)) {
      const auto& pj = j["performance"];
      reject_unknown_keys(pj, {"latency_ms", "reference_latency_ms", "speedup_factor"}, pp, errs);
      performance_info p;
      p.latency_ms = get_number(pj, "latency_ms", pp, errs).value_or(0);
      p.reference_latency_ms = get_number(pj, "reference_latency_ms", pp, errs).value_or(0);
      p.speedup_factor = get_number(pj, "speedup_factor", pp, errs).value_or(0);
      if (p.latency_ms < 0 || p.reference_latency_ms < 0 || p.speedup_factor < 0)
        errs.add(pp, "latencies and speedup must be >= 0");
      e.performance = p;
    }
  }
  if (!errs.empty()) return errs.to_error();
  if (auto st = check_evaluation_blocks(e, path); !st) return st.err();
  return e;
}

ordered_json to_json(const evaluation& e) {
  ordered_json j;
  j["status"] = std::string(status_name(e.status));
  ordered_json libs = ordered_json::object();
  for (const auto& [k, v] : e.environment.libs) libs[k] = v;
  j["environment"] = {{"hardware", e.environment.hardware}, {"libs", libs}};
  j["timestamp"] = e.timestamp;
  j["log"] = e.log;
  if (e.correctness) {
    ordered_json c;
    c["max_relative_error"] = finite_or_string(e.correctness->max_relative_error);
    c["max_absolute_error"] = finite_or_string(e.correctness->max_absolute_error);
    c["extra"] = e.correctness->extra;
    j["correctness"] = c;
  } else {
    j["correctness"] = nullptr;
  }
  if (e.performance) {
    j["performance"] = {{"latency_ms", e.performance->latency_ms},
                        {"reference_latency_ms", e.performance->reference_latency_ms},
                        {"speedup_factor", e.performance->speedup_factor}};
  } else {
    j["performance"] = nullptr;
  }
  return j;
}

result<trace> trace_from_json(const ordered_json& j, const std::string& path) {
  json_errors errs;
  if (!expect_object(j, path, errs)) return errs.to_error();
  reject_unknown_keys(j, {"definition", "workload", "solution", "evaluation"}, path, errs);
  trace t;
  t.definition = get_string(j, "definition", path, errs).value_or("");
  if (!errs.empty()) return errs.to_error();
  if (!j.contains("workload")) return make_error(json_child(path, "workload") + ": missing required field");
  auto w = workload_from_json(j["workload"], json_child(path, "workload"));
  if (!w) return w.err();
  t.workload_ = *w;
  if (j.contains("solution") && !j["solution"].is_null()) {
    if (!j["solution"].is_string()) return make_error(json_child(path, "solution") + ": expected string or null");
    t.solution = j["solution"].get<std::string>();
  }
  if (j.contains("evaluation") && !j["evaluation"].is_null()) {
    auto e = evaluation_from_json(j["evaluation"], json_child(path, "evaluation"));
    if (!e) return e.err();
    t.eval = *e;
  }
  return t;
}

ordered_json to_json(const trace& t) {
  ordered_json j;
  j["definition"] = t.definition;
  j["workload"] = to_json(t.workload_);
  j["solution"] = t.solution ? ordered_json(*t.solution) : ordered_json(nullptr);
  j["evaluation"] = t.eval ? to_json(*t.eval) : ordered_json(nullptr);
  return j;
}

}  // namespace ptxbench
