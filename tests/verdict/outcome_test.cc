#include "verdict/outcome.h"

#include <gtest/gtest.h>

#include <set>

namespace ptxbench {
namespace {

TEST(Outcome, EveryNameParsesBackAndIsUnique) {
  std::set<std::string_view> names, titles;
  for (auto o : k_all_outcomes) {
    EXPECT_EQ(parse_outcome(outcome_name(o)), o) << outcome_name(o);
    EXPECT_TRUE(names.insert(outcome_name(o)).second) << "duplicate name " << outcome_name(o);
    EXPECT_TRUE(titles.insert(outcome_title(o)).second) << "duplicate title " << outcome_title(o);
  }
  EXPECT_FALSE(parse_outcome("ok"));
  EXPECT_FALSE(parse_outcome(""));
  EXPECT_FALSE(parse_outcome("Correct"));  // upstream's spelling is read only by outcome_from_upstream_label
}

TEST(Outcome, LabelsOfOlderTrajectoryFilesStillRead) {
  EXPECT_EQ(parse_outcome("correct"), eval_outcome::passed);
  EXPECT_EQ(parse_outcome("compilation_error"), eval_outcome::compile_error);
  EXPECT_EQ(parse_outcome("numerical_error"), eval_outcome::incorrect_numerical);
  EXPECT_EQ(parse_outcome("gate_rejected"), eval_outcome::rejected);
  EXPECT_EQ(parse_outcome("extraction_error"), eval_outcome::no_code);
}

TEST(Outcome, FlashInferStatusFollowsFromTheOutcome) {
  EXPECT_EQ(flashinfer_status(eval_outcome::passed), eval_status::PASSED);
  EXPECT_EQ(flashinfer_status(eval_outcome::rejected), eval_status::COMPILE_ERROR);
  EXPECT_EQ(flashinfer_status(eval_outcome::compile_error), eval_status::COMPILE_ERROR);
  EXPECT_EQ(flashinfer_status(eval_outcome::runtime_error), eval_status::RUNTIME_ERROR);
  EXPECT_EQ(flashinfer_status(eval_outcome::incorrect_shape), eval_status::INCORRECT_SHAPE);
  EXPECT_EQ(flashinfer_status(eval_outcome::incorrect_dtype), eval_status::INCORRECT_DTYPE);
  EXPECT_EQ(flashinfer_status(eval_outcome::incorrect_numerical), eval_status::INCORRECT_NUMERICAL);
  EXPECT_EQ(flashinfer_status(eval_outcome::timeout), eval_status::TIMEOUT);
  for (auto o : {eval_outcome::built, eval_outcome::no_code, eval_outcome::infra_error, eval_outcome::other_error})
    EXPECT_FALSE(flashinfer_status(o)) << outcome_name(o);
}

TEST(Outcome, UpstreamLabelsMapInOnePlace) {
  EXPECT_EQ(outcome_from_upstream_label("Correct"), eval_outcome::passed);
  EXPECT_EQ(outcome_from_upstream_label("Compilation error"), eval_outcome::compile_error);
  EXPECT_EQ(outcome_from_upstream_label("Runtime error"), eval_outcome::runtime_error);
  EXPECT_EQ(outcome_from_upstream_label("Numerical error"), eval_outcome::incorrect_numerical);
  EXPECT_EQ(outcome_from_upstream_label("Kernel Execution Timeout"), eval_outcome::timeout);
  EXPECT_EQ(outcome_from_upstream_label("Profiling Service Timeout"), eval_outcome::timeout);
  EXPECT_EQ(outcome_from_upstream_label("Sanitize Timeout"), eval_outcome::timeout);
  EXPECT_EQ(outcome_from_upstream_label("Extraction error"), eval_outcome::no_code);
  EXPECT_EQ(outcome_from_upstream_label("Other error"), eval_outcome::other_error);
  EXPECT_FALSE(outcome_from_upstream_label("correct"));
}

TEST(Outcome, OnlyInfrastructureErrorsSayNothingAboutTheCandidate) {
  for (auto o : k_all_outcomes) EXPECT_EQ(is_candidate_outcome(o), o != eval_outcome::infra_error) << outcome_name(o);
}

}  // namespace
}  // namespace ptxbench
