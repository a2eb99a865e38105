#include <cmath>

#include <gtest/gtest.h>

#include "suite/trace.h"

namespace ptxbench {
namespace {

ordered_json passed_trace() {
  return ordered_json::parse(R"({"definition": "gemm", "workload": {"uuid": "u", "axes": {"M": 8}, "inputs": {}},
    "solution": "s", "evaluation": {"status": "PASSED", "environment": {"hardware": "NVIDIA H200", "libs": {"cuda": "13.0"}},
    "timestamp": "2026-11-29T00:00:00Z", "log": "",
    "correctness": {"max_relative_error": 0.001, "max_absolute_error": 0.002, "extra": null},
    "performance": {"latency_ms": 1.0, "reference_latency_ms": 0.8, "speedup_factor": 0.8}}})");
}

TEST(Trace, RoundTrip) {
  auto t = trace_from_json(passed_trace());
  ASSERT_TRUE(t.ok()) << t.err().message;
  EXPECT_EQ(t->eval->status, eval_status::PASSED);
  auto again = trace_from_json(to_json(*t));
  ASSERT_TRUE(again.ok()) << again.err().message;
  EXPECT_EQ(to_json(*again), to_json(*t));
}

TEST(Trace, PassedNeedsPerformance) {
  auto j = passed_trace();
  j["evaluation"]["performance"] = nullptr;
  auto t = trace_from_json(j);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.err().message, "trace.evaluation.performance: required when status is PASSED");
}

TEST(Trace, NumericalErrorForbidsPerformance) {
  auto j = passed_trace();
  j["evaluation"]["status"] = "INCORRECT_NUMERICAL";
  auto t = trace_from_json(j);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.err().message, "trace.evaluation.performance: not allowed when status is INCORRECT_NUMERICAL");
}

TEST(Trace, CompileErrorForbidsCorrectness) {
  auto j = passed_trace();
  j["evaluation"]["status"] = "COMPILE_ERROR";
  j["evaluation"]["performance"] = nullptr;
  auto t = trace_from_json(j);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.err().message, "trace.evaluation.correctness: not allowed when status is COMPILE_ERROR");
}

TEST(Trace, NanAndInfinityTravelAsStrings) {
  auto j = passed_trace();
  j["evaluation"]["status"] = "INCORRECT_NUMERICAL";
  j["evaluation"]["performance"] = nullptr;
  j["evaluation"]["correctness"]["max_absolute_error"] = "NaN";
  j["evaluation"]["correctness"]["max_relative_error"] = "Infinity";
  auto t = trace_from_json(j);
  ASSERT_TRUE(t.ok()) << t.err().message;
  EXPECT_TRUE(std::isnan(t->eval->correctness->max_absolute_error));
  EXPECT_TRUE(std::isinf(t->eval->correctness->max_relative_error));
  auto out = to_json(*t);
  EXPECT_EQ(out["evaluation"]["correctness"]["max_absolute_error"], "NaN");
  EXPECT_EQ(out["evaluation"]["correctness"]["max_relative_error"], "Infinity");
}

TEST(Trace, UnknownStatusIsNamed) {
  auto j = passed_trace();
  j["evaluation"]["status"] = "OK";
  auto t = trace_from_json(j);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.err().message, "trace.evaluation.status: unknown status \"OK\"");
}

}  // namespace
}  // namespace ptxbench
