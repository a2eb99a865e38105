// The harness's decision on a call's tamper evidence (eval/measurement_audit.h): each kind of
// evidence the runner can report, the shape of the f04 decoy exploits, a forged report without an
// audit, and a malformed one.
#include <gtest/gtest.h>

#include "measure/measurement_audit.h"

namespace ptxbench::measure {
namespace {

bool mentions(const std::optional<std::string>& s, const std::string& what) {
  return s && s->rfind("measurement tampered: ", 0) == 0 && s->find(what) != std::string::npos;
}

TEST(MeasurementAudit, AnIntactCallIsNotTampering) {
  call_audit a;
  a.launches = 3;
  EXPECT_FALSE(find_tampering(a).has_value());
  EXPECT_FALSE(judge_call_audit(true, to_json(a)).has_value());
}

TEST(MeasurementAudit, TheCuptiDecoyLeavesALaunchWithoutARecord) {
  // tests/exploits/f04_cupti_decoy_elf_walk.cu: CONCURRENT_KERNEL records off, the GEMM launched,
  // records on again, a decoy launched. The callbacks saw two launches; only the decoy has a record.
  call_audit a;
  a.launches = 2;
  a.unrecorded = 1;
  a.unrecorded_apis = {"__cudaLaunchKernel_v13000"};
  auto t = find_tampering(a);
  EXPECT_TRUE(mentions(t, "1 of 2 kernel launch(es) during the call left no activity record")) << t.value_or("");
  EXPECT_TRUE(mentions(t, "__cudaLaunchKernel_v13000"));
}

TEST(MeasurementAudit, RecordsLeftOffShowInTheMarkers) {
  call_audit a;
  a.marker_after = false;
  EXPECT_TRUE(mentions(find_tampering(a), "off after the call"));
  a.marker_before = false;
  EXPECT_TRUE(mentions(find_tampering(a), "off before and after the call"));
  a.marker_after = true;
  EXPECT_TRUE(mentions(find_tampering(a), "off before the call"));
}

TEST(MeasurementAudit, ADisturbedCountingChannelComesFirst) {
  // Callbacks off: the launch count is meaningless (here it says 0 unrecorded), so this is reported.
  call_audit a;
  a.callbacks_enabled = false;
  a.marker_after = false;
  EXPECT_TRUE(mentions(find_tampering(a), "callbacks were switched off"));
  call_audit b;
  b.marker_after_counted = false;
  EXPECT_TRUE(mentions(find_tampering(b), "no longer saw its own marker launch"));
}

TEST(MeasurementAudit, LaunchesOutsideTheCallAreTampering) {
  call_audit a;
  a.launches = 1;
  a.launches_outside_calls = 4;
  EXPECT_TRUE(mentions(find_tampering(a), "4 kernel launch(es) while no call was running"));
}

TEST(MeasurementAudit, AMissingOrMalformedAuditFromAnAuditingRunnerIsAForgery) {
  // tests/exploits/f13_forged_done.cu writes its own "done" without an audit.
  EXPECT_TRUE(mentions(judge_call_audit(true, nullptr), "carries no audit"));
  EXPECT_FALSE(judge_call_audit(false, nullptr).has_value());  // a runner without CUPTI audits nothing
  EXPECT_TRUE(mentions(judge_call_audit(true, ordered_json{{"launches", 1}}), "malformed"));
  auto j = to_json(call_audit{});
  j["unrecorded"] = 5;  // more unrecorded than launches
  EXPECT_TRUE(mentions(judge_call_audit(true, j), "malformed"));
  j = to_json(call_audit{});
  j["launches"] = -1;
  EXPECT_TRUE(mentions(judge_call_audit(true, j), "malformed"));
  j = to_json(call_audit{});
  j["matching"] = "guess";
  EXPECT_TRUE(mentions(judge_call_audit(true, j), "malformed"));
  j = to_json(call_audit{});
  j["marker_after"] = "yes";
  EXPECT_TRUE(mentions(judge_call_audit(true, j), "malformed"));
}

TEST(MeasurementAudit, JsonRoundTrips) {
  call_audit a;
  a.launches = 7;
  a.graph_launches = 1;
  a.captured_launches = 4;
  a.unrecorded = 2;
  a.unrecorded_apis = {"cuLaunchKernel", "cudaGraphLaunch_v10000"};
  a.launches_outside_calls = 3;
  a.marker_before = false;
  a.marker_after_counted = false;
  auto back = call_audit_from_json(to_json(a));
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->launches, 7);
  EXPECT_EQ(back->graph_launches, 1);
  EXPECT_EQ(back->captured_launches, 4);
  EXPECT_EQ(back->unrecorded, 2);
  EXPECT_EQ(back->unrecorded_apis, a.unrecorded_apis);
  EXPECT_EQ(back->launches_outside_calls, 3);
  EXPECT_FALSE(back->marker_before);
  EXPECT_TRUE(back->marker_after);
  EXPECT_FALSE(back->marker_after_counted);
}

}  // namespace
}  // namespace ptxbench::measure
