#pragma once
// Tamper evidence for one candidate call (issue 20, item 5(b)): what the runner observed about its
// own measurement, and the harness's decision on it. The runner counts the kernel launches of a call
// through CUPTI's callback API — a second channel, separate from the activity records that make the
// span — and checks that every launch left an activity record, that its own marker kernels before
// and after the call were recorded (activity recording was on), that the callbacks are still
// enabled, and that no kernel was launched while no call ran (a background thread doing the work
// outside the timed window). Any mismatch is RUNTIME_ERROR "measurement tampered: ...".
//
// The runner shares its process with the candidate, so all of this is evidence against naive
// tampering only (docs/trusted-timing.md says what it does not stop); the harness's own clock is the
// bound that does not depend on it.

#include <optional>
#include <string>
#include <vector>

#include "core/json_check.h"
#include "core/result.h"

namespace ptxbench::measure {

/// What the runner reports in a call's "audit" object (src/gpu/runner/launch_audit_session.h).
struct call_audit {
  int launches = 0;                          ///< kernel and graph launches during the call (callback channel)
  int graph_launches = 0;                    ///< of which graph launches
  int captured_launches = 0;                 ///< launches captured into a graph (not executed; not in launches)
  int unrecorded = 0;                        ///< launches with no activity record of their own
  std::vector<std::string> unrecorded_apis;  ///< the API names of the first few of those
  int launches_outside_calls = 0;            ///< launches since the previous call while no call ran
  bool marker_before = true;                 ///< the runner's marker kernel before the call left a record
  bool marker_after = true;                  ///< ... and the one after the call
  bool marker_after_counted = true;          ///< the callback channel saw the marker after the call
  bool callbacks_enabled = true;             ///< every launch callback still enabled after the call
  std::string matching = "correlation";      ///< how launches were matched to records: "correlation" | "count"
};

/// Reads the runner's "audit" object strictly (every field required, right types).
result<call_audit> call_audit_from_json(const ordered_json& j);
ordered_json to_json(const call_audit& a);

/// The first finding as "measurement tampered: ...", or nullopt when the call's measurement is intact.
std::optional<std::string> find_tampering(const call_audit& a);

/// The harness's judgement of one successful call: runner_audits says whether the runner announced
/// auditing when it started (CUPTI callbacks and activity records both on). Then a missing or
/// malformed audit is itself tampering (a forged report), else find_tampering decides. Without
/// auditing there is nothing to judge.
std::optional<std::string> judge_call_audit(bool runner_audits, const ordered_json& audit);

}  // namespace ptxbench::measure
