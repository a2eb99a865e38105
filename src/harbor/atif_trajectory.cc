#include "harbor/atif_trajectory.h"

#include <fmt/format.h>

#include "core/text.h"
#include "harbor/verdict_scan.h"

namespace ptxbench::harbor {
namespace {

// ATIF content is a string; newer versions also allow a list of parts ({"type": "text", "text": ...}).
std::optional<std::string> content_text(const ordered_json& c, const std::string& path, json_errors& errs) {
  if (c.is_null()) return std::string();
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) {
    errs.add(path, "expected text or a list of content parts, got " + json_type_name(c));
    return std::nullopt;
  }
  std::string out;
  for (const auto& part : c)
    if (part.is_object() && part.contains("text") && part["text"].is_string()) {
      if (!out.empty()) out += "\n";
      out += part["text"].get<std::string>();
    }
  return out;
}

void read_metrics(const ordered_json& m, const std::string& path, atif_step& step, json_errors& errs) {
  if (!expect_object(m, path, errs)) return;
  step.prompt_tokens = get_int(m, "prompt_tokens", path, errs, false);
  step.completion_tokens = get_int(m, "completion_tokens", path, errs, false);
  step.cost_usd = get_number(m, "cost_usd", path, errs, false);
  if (m.contains("extra") && m["extra"].is_object())
    step.reasoning_tokens = get_int(m["extra"], "reasoning_tokens", json_child(path, "extra"), errs, false);
}

void read_observation(const ordered_json& o, const std::string& path, atif_step& step, json_errors& errs) {
  if (!expect_object(o, path, errs)) return;
  const std::string rp = json_child(path, "results");
  if (!o.contains("results")) {
    errs.add(rp, "missing required field");
    return;
  }
  if (!expect_array(o["results"], rp, errs)) return;
  for (std::size_t i = 0; i < o["results"].size(); ++i) {
    const auto& r = o["results"][i];
    const std::string ip = json_index(rp, i);
    if (!expect_object(r, ip, errs)) continue;
    if (!r.contains("content")) continue;  // a subagent reference carries no content
    auto text = content_text(r["content"], json_child(ip, "content"), errs);
    if (!text) continue;
    auto found = find_verdicts(*text);
    if (found.empty()) continue;
    if (!step.observation.empty()) step.observation += "\n";
    step.observation += *text;
    for (auto& v : found) step.verdicts.push_back(std::move(v));
  }
}

}  // namespace

result<atif_trajectory> atif_from_json(const ordered_json& j) {
  json_errors errs;
  atif_trajectory out;
  if (!expect_object(j, "", errs)) return errs.to_error();
  out.schema_version = get_string(j, "schema_version", "", errs).value_or("");
  if (!out.schema_version.empty() && !starts_with(out.schema_version, "ATIF-v"))
    errs.add("schema_version", fmt::format("'{}' is not an ATIF version (ATIF-v1.x)", out.schema_version));
  out.session_id = get_string(j, "session_id", "", errs, false, false).value_or("");
  if (!j.contains("agent")) errs.add("agent", "missing required field");
  else if (expect_object(j["agent"], "agent", errs)) {
    out.agent_name = get_string(j["agent"], "name", "agent", errs).value_or("");
    out.agent_version = get_string(j["agent"], "version", "agent", errs, false, false).value_or("");
    out.model_name = get_string(j["agent"], "model_name", "agent", errs, false, false).value_or("");
  }
  if (!errs.empty()) return errs.to_error();
  if (!j.contains("steps")) return make_error("steps: missing required field");
  if (!expect_array(j["steps"], "steps", errs)) return errs.to_error();
  std::optional<int64_t> previous;
  for (std::size_t i = 0; i < j["steps"].size(); ++i) {
    const auto& s = j["steps"][i];
    const std::string sp = json_index("steps", i);
    if (!expect_object(s, sp, errs)) return errs.to_error();
    atif_step step;
    auto id = get_int(s, "step_id", sp, errs);
    auto source = get_string(s, "source", sp, errs);
    if (!errs.empty()) return errs.to_error();
    if (*source != "system" && *source != "user" && *source != "agent")
      return make_error(fmt::format("{}.source: '{}' (expected system, user or agent)", sp, *source));
    if (previous && *id <= *previous)
      return make_error(fmt::format("{}.step_id: {} follows step {}; step ids must increase", sp, *id, *previous));
    previous = id;
    step.step_id = *id;
    step.source = *source;
    step.model_name = get_string(s, "model_name", sp, errs, false, false).value_or("");
    if (s.contains("metrics") && !s["metrics"].is_null()) read_metrics(s["metrics"], json_child(sp, "metrics"), step, errs);
    if (s.contains("observation") && !s["observation"].is_null())
      read_observation(s["observation"], json_child(sp, "observation"), step, errs);
    if (!errs.empty()) return errs.to_error();
    out.steps.push_back(std::move(step));
  }
  return out;
}

}  // namespace ptxbench::harbor
