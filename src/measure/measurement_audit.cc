#include "measure/measurement_audit.h"

#include <fmt/format.h>

namespace ptxbench::measure {

result<call_audit> call_audit_from_json(const ordered_json& j) {
  json_errors errs;
  const std::string path = "audit";
  if (!expect_object(j, path, errs)) return errs.to_error();
  call_audit a;
  auto count = [&](const char* key) {
    auto v = get_int(j, key, path, errs);
    if (v && *v < 0) errs.add(json_child(path, key), "must not be negative");
    return v ? static_cast<int>(*v) : 0;
  };
  a.launches = count("launches");
  a.graph_launches = count("graph_launches");
  a.captured_launches = count("captured_launches");
  a.unrecorded = count("unrecorded");
  a.launches_outside_calls = count("launches_outside_calls");
  a.unrecorded_apis = get_string_list(j, "unrecorded_apis", path, errs).value_or(std::vector<std::string>{});
  a.marker_before = get_bool(j, "marker_before", path, errs).value_or(false);
  a.marker_after = get_bool(j, "marker_after", path, errs).value_or(false);
  a.marker_after_counted = get_bool(j, "marker_after_counted", path, errs).value_or(false);
  a.callbacks_enabled = get_bool(j, "callbacks_enabled", path, errs).value_or(false);
  a.matching = get_string(j, "matching", path, errs, false).value_or("correlation");
  if (a.matching != "correlation" && a.matching != "count")
    errs.add(json_child(path, "matching"), "must be \"correlation\" or \"count\"");
  if (errs.empty() && a.unrecorded > a.launches) errs.add(json_child(path, "unrecorded"), "exceeds launches");
  if (!errs.empty()) return errs.to_error();
  return a;
}

ordered_json to_json(const call_audit& a) {
  return {{"launches", a.launches},
          {"graph_launches", a.graph_launches},
          {"captured_launches", a.captured_launches},
          {"unrecorded", a.unrecorded},
          {"unrecorded_apis", a.unrecorded_apis},
          {"launches_outside_calls", a.launches_outside_calls},
          {"marker_before", a.marker_before},
          {"marker_after", a.marker_after},
          {"marker_after_counted", a.marker_after_counted},
          {"callbacks_enabled", a.callbacks_enabled},
          {"matching", a.matching}};
}

std::optional<std::string> find_tampering(const call_audit& a) {
  // The configuration first: with the counting channel itself disturbed, the counts mean nothing.
  if (!a.callbacks_enabled)
    return "measurement tampered: the runner's kernel-launch callbacks were switched off during the call";
  if (!a.marker_after_counted)
    return "measurement tampered: the runner's kernel-launch callbacks no longer saw its own marker launch after the "
           "call (the CUPTI subscription was replaced or disabled)";
  if (!a.marker_before || !a.marker_after)
    return fmt::format("measurement tampered: kernel activity records were off {} the call (the runner's marker "
                       "kernel left no record)",
                       !a.marker_before && !a.marker_after ? "before and after"
                       : !a.marker_before                  ? "before"
                                                           : "after");
  if (a.unrecorded > 0) {
    std::string apis;
    for (const auto& name : a.unrecorded_apis) apis += (apis.empty() ? "" : ", ") + name;
    return fmt::format("measurement tampered: {} of {} kernel launch(es) during the call left no activity record{} — "
                       "records were switched off around work",
                       a.unrecorded, a.launches, apis.empty() ? "" : " (" + apis + ")");
  }
  if (a.launches_outside_calls > 0)
    return fmt::format("measurement tampered: {} kernel launch(es) while no call was running (work launched outside "
                       "the timed call, e.g. by a background thread)",
                       a.launches_outside_calls);
  return std::nullopt;
}

std::optional<std::string> judge_call_audit(bool runner_audits, const ordered_json& audit) {
  if (!runner_audits) return std::nullopt;
  if (audit.is_null())
    return std::string("measurement tampered: the runner's report of the call carries no audit (a forged report)");
  auto a = call_audit_from_json(audit);
  if (!a) return "measurement tampered: the runner's audit of the call is malformed (" + a.err().message + ")";
  return find_tampering(*a);
}

}  // namespace ptxbench::measure
