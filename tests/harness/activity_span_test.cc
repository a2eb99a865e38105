// activity_tracer::span_of: the span of a call's records and its busy time (the union of their
// intervals), which tells a launch-bound reference from a compute-bound one.
#include <gtest/gtest.h>

#include "gpu/common/activity_tracer.h"

namespace ptxbench::gpu {
namespace {

TEST(ActivitySpan, BusyTimeIsTheUnionOfTheRecordsLessTheGaps) {
  // Two kernels with a 30 ns gap, a copy overlapping the second, one record outside the window.
  std::vector<activity_record> recs = {{200, 260, 2, "b"}, {100, 170, 1, "a"}, {240, 300, 3, ""}, {900, 950, 4, "late"}};
  auto s = activity_tracer::span_of(recs, 100, 400);
  EXPECT_EQ(s.records, 3);
  EXPECT_EQ(s.start_ns, 100u);
  EXPECT_EQ(s.end_ns, 300u);
  EXPECT_EQ(s.busy_ns, 70u + 100u);  // [100,170) and [200,300)
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(activity_tracer::span_of({}, 0, 10).busy_ns, 0u);
}

TEST(ActivitySpan, ARecordOfTheCallTimestampedJustOutsideItsWindowStillCounts) {
  // The call's kernel (correlation 7) ends 3 ns after t1 on the CPU clock; a previous call's late
  // record (correlation 5) and records of the call CUPTI could not time (a zero timestamp) stay out.
  std::vector<activity_record> recs = {{120, 403, 7, "gemm"}, {50, 90, 5, "previous"}, {0, 0, 7, "untimed"}, {0, 500, 7, "half-timed"}};
  auto windowed = activity_tracer::span_of(recs, 100, 400);
  EXPECT_EQ(windowed.records, 0);
  auto s = activity_tracer::span_of(recs, 100, 400, {7});
  EXPECT_EQ(s.records, 1);
  EXPECT_EQ(s.kernels, (std::vector<std::string>{"gemm"}));
  EXPECT_EQ(s.start_ns, 120u);
  EXPECT_EQ(s.end_ns, 403u);
}

}  // namespace
}  // namespace ptxbench::gpu
