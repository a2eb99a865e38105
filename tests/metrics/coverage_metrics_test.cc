// Coverage-qualified target correctness in the metrics (beyond the paper): a turn record carries
// the verdict's best work coverage; with --min-coverage the turn rates and Table 1 count only
// target-correct turns whose coverage reaches it.
#include <gtest/gtest.h>

#include "metrics/aggregate.h"
#include "metrics/metrics_csv.h"
#include "metrics/table1.h"
#include "metrics/trajectory_reader.h"

namespace ptxbench::metrics {
namespace {

turn_record coverage_turn(int n, bool target_correct, std::optional<double> coverage) {
  turn_record r;
  r.model = "M";
  r.arch = "sm_90a";
  r.definition = "gemm_n7168_k5120";
  r.exp_dir = "/r";
  r.trajectory = "t" + std::to_string(n);
  r.turn = 0;
  r.label = eval_outcome::passed;
  r.target_correct = target_correct;
  r.coverage = coverage;
  return r;
}

TEST(CoverageMetrics, OnlyTurnsWithEnoughKnownCoverageCount) {
  // Four correct turns: an honest wgmma kernel (100 %), a token-wgmma one (0.00003 %), a correct
  // kernel with unknown coverage, and a correct kernel that is not target-correct.
  std::vector<turn_record> turns = {coverage_turn(0, true, 1.0), coverage_turn(1, true, 2.7e-8), coverage_turn(2, true, std::nullopt),
                                    coverage_turn(3, false, 0.95)};
  auto plain = compute_turn_rates(turns, 1);
  EXPECT_EQ(plain.target_correct_turns, 3);
  EXPECT_FALSE(plain.coverage_target_rate.has_value());  // no threshold, no column
  auto r = compute_turn_rates(turns, 1, 0.9);
  EXPECT_EQ(r.target_correct_turns, 3);
  EXPECT_EQ(r.coverage_target_correct_turns, 1);
  EXPECT_DOUBLE_EQ(*r.coverage_target_rate, 0.25);
}

TEST(CoverageMetrics, Table1GainsABracketedLineAndTheCsvTwoColumns) {
  std::vector<turn_record> turns = {coverage_turn(0, true, 1.0), coverage_turn(1, true, 0.0)};
  metrics_options opt;
  opt.turn_limits = {1};
  opt.min_coverage = 0.9;
  auto tables = compute_metrics(group_turns(turns), opt);
  ASSERT_EQ(tables.turn_rates.size(), 1u);
  auto blocks = build_table1(tables.turn_rates, opt.turn_limits, opt.min_coverage);
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].rows[0].cells[0].target_line, "100.0");
  EXPECT_EQ(blocks[0].rows[0].cells[0].coverage_line, "[cov≥90%: 50.0]");
  auto md = render_table1_markdown(blocks, opt.turn_limits);
  EXPECT_NE(md.find("| M | 100.0 |\n|  | (100.0) |\n|  | [cov≥90%: 50.0] |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("Third line, in brackets"), std::string::npos);
  auto csv = turn_rates_csv(tables.turn_rates);
  EXPECT_NE(csv.find("coverage_target_correct_turns,coverage_target_turn_correctness_rate\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",2,2,2,1,1,1,0.5\n"), std::string::npos) << csv;
  // Without a threshold the Table 1 text is exactly as before.
  auto without = build_table1(compute_metrics(group_turns(turns), metrics_options{{1}}).turn_rates, {1});
  EXPECT_TRUE(without[0].rows[0].cells[0].coverage_line.empty());
  EXPECT_EQ(render_table1_markdown(without, {1}).find("Third line"), std::string::npos);
}

TEST(CoverageMetrics, TheReaderTakesTheBestCoverageFromTheEmbeddedVerdict) {
  auto traj = ordered_json::parse(R"({
    "info": {"exit_status": "done",
             "ptxbench": {"model": "M", "task": "gemm_n7168_k5120", "target": "h200", "arch": "sm_90a",
                          "variant": "base", "turn_limit": 8, "trajectory_index": 0}},
    "messages": [
      {"role": "system", "content": "s"}, {"role": "user", "content": "u"},
      {"role": "assistant", "content": "```cuda\nk\n```"},
      {"role": "user", "content": "feedback", "extra": {"turn": 0, "all_passed": true, "ptxbench": {
        "label": "passed", "target_verdict": "executed", "target_correct": true, "speedup": 0.9,
        "verdict": {"message": "correct", "target_instructions": {"coverage": {
          "GMMA": {"fraction": 0.999, "unit": "flop"}, "TMA": {"fraction": null, "unit": "byte"}}}}}}}
    ]})");
  auto t = trajectory_from_json(traj, "t0", "/r");
  ASSERT_TRUE(t.ok()) << t.err().message;
  ASSERT_EQ(t->turns.size(), 1u);
  ASSERT_TRUE(t->turns[0].coverage.has_value());
  EXPECT_DOUBLE_EQ(*t->turns[0].coverage, 0.999);
}

}  // namespace
}  // namespace ptxbench::metrics
