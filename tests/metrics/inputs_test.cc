#include <gtest/gtest.h>

#include "metrics/inputs.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {

TEST(MetricsInputs, ParsesTurnLimitsAndPRange) {
  EXPECT_EQ(*parse_turn_limits("8,1,4,4"), (std::vector<int>{1, 4, 8}));
  EXPECT_EQ(parse_turn_limits("1,x").err().message, "--turn-limits: expected positive integers separated by commas, got 'x'");
  EXPECT_FALSE(parse_turn_limits("0"));
  EXPECT_FALSE(parse_turn_limits(""));
  auto p = parse_p_range("0:1:0.25");
  ASSERT_TRUE(p);
  EXPECT_EQ(*p, (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(parse_p_range("1:0:0.1").err().message, "--fast-p: expected FROM:TO:STEP such as 0:1.5:0.05, got '1:0:0.1'");
  EXPECT_FALSE(parse_p_range("0:1"));
  EXPECT_FALSE(parse_p_range("0:1:0"));
  EXPECT_FALSE(parse_p_range("0:100:0.001"));
}

TEST(MetricsInputs, NeedsSomethingToRead) {
  EXPECT_EQ(load_inputs({}).err().message, "nothing to read: give one or more RUN_DIRs and/or --import-upstream FILE");
}

TEST(MetricsInputs, ReadsRunDirsThenUpstream) {
  input_spec spec;
  spec.run_dirs = {testing::fixtures_dir() / "trajectories/run_small"};
  spec.upstream_turns = testing::fixtures_dir() / "upstream/turns_subset.csv";
  spec.upstream_experiments = testing::fixtures_dir() / "upstream/experiments_subset.csv";
  auto in = load_inputs(spec);
  ASSERT_TRUE(in) << in.err().message;
  EXPECT_EQ(in->records.size(), 12u + 864u);
  EXPECT_EQ(in->records.front().model, "fixture-model");
  EXPECT_EQ(in->runs.size(), 1u);
  EXPECT_TRUE(in->notes.empty());
  ASSERT_EQ(in->sources.size(), 2u);
  EXPECT_EQ(in->sources[1]["records"], 864);
  auto c = count_records(in->records);
  EXPECT_EQ(c.turns, 11 + 864);
  EXPECT_EQ(c.infra_errors, 1);
}

}  // namespace
}  // namespace ptxbench::metrics
