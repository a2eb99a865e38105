// The pure part of the runner's launch audit (gpu/common/launch_audit.h): how callbacks group into
// launches, which launches left no record, and that the "audit" object it writes is what the
// harness's decision (eval/measurement_audit.h) reads.
#include <gtest/gtest.h>

#include "measure/measurement_audit.h"
#include "gpu/common/launch_audit.h"

namespace ptxbench::gpu {
namespace {

TEST(LaunchGrouper, ARuntimeLaunchCollectsTheIdsOfTheDriverCallsInsideIt) {
  launch_grouper g;
  g.enter(true, "cudaLaunchKernel_v7000", false, 10);
  g.enter(true, "cuLaunchKernel", false, 11);  // if the driver reports the runtime's own call
  EXPECT_FALSE(g.exit(true).has_value());
  auto l = g.exit(true);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->api, "cudaLaunchKernel_v7000");
  EXPECT_EQ(l->correlation_ids, (std::vector<uint32_t>{10, 11}));
  EXPECT_EQ(g.depth(), 0);
}

TEST(LaunchGrouper, ADirectDriverLaunchIsOneLaunch) {
  launch_grouper g;
  g.enter(true, "cuLaunchKernelEx", false, 3);
  auto l = g.exit(true);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->correlation_ids, (std::vector<uint32_t>{3}));
}

TEST(LaunchGrouper, LaunchesInsideOtherRuntimeCallsAndRefusedLaunchesDoNotCount) {
  launch_grouper g;
  g.enter(false, "cudaMemsetAsync_v3020", false, 20);  // the runtime's internal work is not the candidate's
  g.enter(true, "cuLaunchKernel", false, 21);
  EXPECT_FALSE(g.exit(true).has_value());
  EXPECT_FALSE(g.exit(true).has_value());
  g.enter(true, "cudaLaunchKernel_v7000", false, 22);
  EXPECT_FALSE(g.exit(false).has_value());  // refused: nothing reached the GPU
  EXPECT_FALSE(g.exit(true).has_value());   // an exit without an enter is ignored
  EXPECT_EQ(g.depth(), 0);
}

TEST(LaunchGrouper, AGraphNodeCreatedInsideALaunchMarksItCaptured) {
  // Stream capture: cudaLaunchKernel into a capturing stream adds a graph node instead of running.
  launch_grouper g;
  g.enter(true, "cudaLaunchKernel_v7000", false, 30);
  g.mark_captured();
  auto l = g.exit(true);
  ASSERT_TRUE(l.has_value());
  EXPECT_TRUE(l->captured);
  g.mark_captured();  // outside any launch: nothing to mark
  g.enter(true, "cudaLaunchKernel_v7000", false, 31);
  auto m = g.exit(true);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->captured);
}

TEST(LaunchAudit, CapturedLaunchesNeedNoRecordButTheGraphLaunchDoes) {
  audit_observations seen;
  seen.marker_before = seen.marker_after = seen.marker_after_counted = seen.callbacks_enabled = true;
  observed_launch captured{"cudaLaunchKernel_v7000", false, true, {50}};
  observed_launch graph{"cudaGraphLaunch_v10000", true, false, {51}};
  seen.launches = {captured, captured, graph};
  auto j = audit_json(seen, {51});
  EXPECT_EQ(j["launches"], 1);
  EXPECT_EQ(j["captured_launches"], 2);
  EXPECT_EQ(j["graph_launches"], 1);
  EXPECT_EQ(j["unrecorded"], 0);
  EXPECT_FALSE(measure::judge_call_audit(true, j).has_value());
  EXPECT_EQ(audit_json(seen, {})["unrecorded"], 1);  // the graph's kernels left no record
}

TEST(LaunchAudit, EveryLaunchNeedsARecordWithOneOfItsIds) {
  std::vector<observed_launch> launches = {{"cudaLaunchKernel_v7000", false, false, {10, 11}},
                                           {"__cudaLaunchKernel_v13000", false, false, {12}},
                                           {"cudaGraphLaunch_v10000", true, false, {13}}};
  EXPECT_TRUE(unrecorded_launches(launches, {11, 12, 13}).empty());  // the record carries the driver's id
  auto missing = unrecorded_launches(launches, {10, 13, 99});
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].api, "__cudaLaunchKernel_v13000");
}

TEST(LaunchAudit, TheDecoyPatternReadsAsTamperingOnTheHarnessSide) {
  // tests/exploits/f04_*: the GEMM launched with kernel records off, the decoy with them on.
  audit_observations seen;
  seen.launches = {{"__cudaLaunchKernel_v13000", false, false, {40}}, {"__cudaLaunchKernel_v13000", false, false, {41}}};
  seen.marker_before = seen.marker_after = seen.marker_after_counted = seen.callbacks_enabled = true;
  auto j = audit_json(seen, {41});
  EXPECT_EQ(j["unrecorded"], 1);
  auto verdict = measure::judge_call_audit(true, j);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_NE(verdict->find("1 of 2 kernel launch(es)"), std::string::npos) << *verdict;
  // The honest call: both recorded.
  EXPECT_FALSE(measure::judge_call_audit(true, audit_json(seen, {40, 41})).has_value());
}

TEST(LaunchAudit, ACorrelationSchemeTheRunnerDoesNotKnowFallsBackToCounting) {
  // No launch matches by id, but as many kernel records as launches arrived in the call: a driver
  // whose records carry other ids, not tampering (an honest call must not fail on it).
  audit_observations seen;
  seen.marker_before = seen.marker_after = seen.marker_after_counted = seen.callbacks_enabled = true;
  seen.launches = {{"cudaLaunchKernel_v7000", false, false, {60}}, {"cudaLaunchKernel_v7000", false, false, {61}}};
  seen.kernel_records_in_call = 2;
  auto j = audit_json(seen, {900, 901});
  EXPECT_EQ(j["matching"], "count");
  EXPECT_EQ(j["unrecorded"], 0);
  EXPECT_FALSE(measure::judge_call_audit(true, j).has_value());
  // Fewer records than launches: still tampering.
  seen.kernel_records_in_call = 1;
  EXPECT_EQ(audit_json(seen, {900})["unrecorded"], 2);
  // The decoy pattern never falls back: its decoy's own launch matches by id.
  seen.kernel_records_in_call = 5;
  auto decoy = audit_json(seen, {61});
  EXPECT_EQ(decoy["matching"], "correlation");
  EXPECT_EQ(decoy["unrecorded"], 1);
}

TEST(LaunchAudit, TheAuditObjectRoundTripsThroughTheHarnessReader) {
  audit_observations seen;
  seen.launches = {{"a", true, false, {1}}, {"b", false, false, {2}}, {"b", false, false, {3}},
                   {"c", false, false, {4}}, {"d", false, false, {5}}, {"e", false, false, {6}}};
  seen.launches_outside_calls = 2;
  seen.marker_before = true;
  auto j = audit_json(seen, {});
  auto back = measure::call_audit_from_json(j);
  ASSERT_TRUE(back.ok()) << back.err().message;
  EXPECT_EQ(back->launches, 6);
  EXPECT_EQ(back->graph_launches, 1);
  EXPECT_EQ(back->unrecorded, 6);
  EXPECT_EQ(back->unrecorded_apis, (std::vector<std::string>{"a", "b", "c", "d"}));  // distinct, at most 4
  EXPECT_EQ(back->launches_outside_calls, 2);
  EXPECT_TRUE(back->marker_before);
  EXPECT_FALSE(back->marker_after);
}

}  // namespace
}  // namespace ptxbench::gpu
