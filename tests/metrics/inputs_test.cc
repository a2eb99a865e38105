#include <cmath>

#include <gtest/gtest.h>

#include "metrics/aggregate.h"
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
  EXPECT_EQ(parse_p_range("0:1.5:0.05")->size(), 31u);
  EXPECT_EQ(parse_p_range("0:0.3:0.1")->size(), 4u);
  EXPECT_FALSE(parse_p_range("0:1"));
  EXPECT_FALSE(parse_p_range("0:100:0.001"));
}

// Every bad number is one line naming what is wrong, before any work (nan once grew the grid until
// std::bad_alloc).
TEST(MetricsInputs, RefusesBadNumbers) {
  const std::pair<const char*, const char*> fast_p[] = {
      {"nan:1:0.1", "--fast-p: FROM must be a finite number, got 'nan' in 'nan:1:0.1'"},
      {"0:nan:0.1", "--fast-p: TO must be a finite number, got 'nan' in '0:nan:0.1'"},
      {"0:1:nan", "--fast-p: STEP must be a finite number, got 'nan' in '0:1:nan'"},
      {"inf:1:0.1", "--fast-p: FROM must be a finite number, got 'inf' in 'inf:1:0.1'"},
      {"0:inf:0.1", "--fast-p: TO must be a finite number, got 'inf' in '0:inf:0.1'"},
      {"0:1:-inf", "--fast-p: STEP must be a finite number, got '-inf' in '0:1:-inf'"},
      {"-1:1:0.1", "--fast-p: FROM must be at least 0 (p is a speedup), got '-1:1:0.1'"},
      {"1:0:0.1", "--fast-p: TO must not be below FROM, got '1:0:0.1'"},
      {"0:1:0", "--fast-p: STEP must be at least 1e-9, got '0:1:0'"},
      {"0:1:-0.1", "--fast-p: STEP must be at least 1e-9, got '0:1:-0.1'"},
      {"0:1:1e-12", "--fast-p: STEP must be at least 1e-9, got '0:1:1e-12'"},
      {"0:1000:0.0001", "--fast-p: '0:1000:0.0001' makes more than 10001 points; use a larger STEP"},
      {"1e17:1e17:1", "--fast-p: TO must be at most 1000000 (a speedup), got '1e17:1e17:1'"},
      {"0:1:0.1:2", "--fast-p: expected FROM:TO:STEP such as 0:1.5:0.05, got '0:1:0.1:2'"},
      {"a:1:0.1", "--fast-p: FROM must be a finite number, got 'a' in 'a:1:0.1'"},
  };
  for (const auto& [text, message] : fast_p) {
    auto r = parse_p_range(text);
    ASSERT_FALSE(r) << text;
    EXPECT_EQ(r.err().message, message);
  }
  EXPECT_EQ(parse_p_range("1000000:1000000:1e-9")->size(), 1u);  // the largest p, a one-point grid
  EXPECT_EQ(parse_turn_limits("100001").err().message,
            "--turn-limits: 100001 is more turns than a trajectory can have (at most 100000)");
  EXPECT_EQ(parse_turn_limits("99999999999999999999").err().message,
            "--turn-limits: expected positive integers separated by commas, got '99999999999999999999'");
  EXPECT_EQ(parse_turn_limits("-1").err().message, "--turn-limits: expected positive integers separated by commas, got '-1'");
  std::string many;
  for (int i = 1; i <= 101; ++i) many += (i > 1 ? "," : "") + std::to_string(i);
  EXPECT_EQ(parse_turn_limits(many).err().message, "--turn-limits: at most 100 limits, got 101");
  EXPECT_FALSE(*parse_min_coverage(""));
  EXPECT_EQ(**parse_min_coverage("0.9"), 0.9);
  for (const char* bad : {"nan", "inf", "-0.1", "1.5", "90", "x"})
    EXPECT_EQ(parse_min_coverage(bad).err().message,
              std::string("--min-coverage: expected a share from 0 to 1 (0.9 = 90%), got '") + bad + "'");
  EXPECT_EQ(*parse_variant_block("0"), 0);
  EXPECT_EQ(*parse_variant_block("4"), 4);
  for (const char* bad : {"-1", "1001", "2.5", "nan", "", "1e9"})
    EXPECT_EQ(parse_variant_block(bad).err().message,
              std::string("--variant-block: expected a whole number from 0 to 1000, got '") + bad + "'");
}

TEST(MetricsInputs, GridNeverRunsAway) {
  EXPECT_TRUE(p_grid(1e17, 1e17, 1).size() == 1u);  // a step below the spacing of doubles there
  EXPECT_TRUE(p_grid(0, 1, 0).empty());
  EXPECT_TRUE(p_grid(std::nan(""), 1, 0.1).empty());
  EXPECT_TRUE(p_grid(0, 1e300, 1e-300).empty());  // more than 10^7 points
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
  EXPECT_TRUE(in->warnings.empty());
  ASSERT_EQ(in->sources.size(), 2u);
  EXPECT_EQ(in->sources[1]["records"], 864);
  auto c = count_records(in->records);
  EXPECT_EQ(c.turns, 11 + 864);
  EXPECT_EQ(c.infra_errors, 1);
}

}  // namespace
}  // namespace ptxbench::metrics
