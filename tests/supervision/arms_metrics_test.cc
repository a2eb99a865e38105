// The supervision arms in the metrics: grouping, the Table-4 view with the solution-bearing arm
// flagged, the CSV files and Fast^Inst_p per arm.
#include <gtest/gtest.h>

#include "metrics/arms.h"

namespace ptxbench::metrics {
namespace {

turn_record rec(const std::string& arm, const std::string& exp_dir, int turn, bool correct, bool target, double speedup) {
  turn_record r;
  r.model = "m";
  r.arch = "sm_90a";
  r.definition = "gemm";
  r.exp_dir = exp_dir;
  r.trajectory = "t0";
  r.arm = arm;
  r.turn = turn;
  r.label = correct ? eval_outcome::passed : eval_outcome::compile_error;
  r.target_correct = target;
  if (correct) r.speedup = speedup;
  return r;
}

TEST(SupervisionArms, SolutionBearingArms) {
  EXPECT_TRUE(is_solution_bearing("notes+kernel"));
  EXPECT_TRUE(is_solution_bearing("guidance:1a2b3c4d+notes+kernel"));
  EXPECT_FALSE(is_solution_bearing("notes"));
  EXPECT_FALSE(is_solution_bearing("guidance:1a2b3c4d+notes"));
  EXPECT_FALSE(is_solution_bearing("base"));
}

TEST(SupervisionArms, Table4PoolsRunsPerArmAndFlagsTheSolutionBearingArm) {
  std::vector<turn_record> records;
  // Arms in a scrambled order and split over run directories; the table orders them.
  for (int k = 0; k < 4; ++k) records.push_back(rec("notes+kernel", "runs/nk", k, k >= 1, k >= 1, 0.5));
  for (int k = 0; k < 4; ++k) records.push_back(rec("base", "runs/base-a", k, false, false, 0));
  for (int k = 0; k < 4; ++k) records.push_back(rec("base", "runs/base-b", k, k == 3, false, 0.9));
  for (int k = 0; k < 4; ++k) records.push_back(rec("guidance:1a2b3c4d", "runs/g", k, k >= 2, k >= 3, 1.3));
  records.push_back(rec("notes", "runs/n", 0, true, true, 0.2));
  auto groups = group_by_arm(records);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].key.arm, "base");
  EXPECT_EQ(groups[0].exp_dirs, (std::vector<std::string>{"runs/base-a", "runs/base-b"}));
  EXPECT_EQ(groups[1].key.arm, "guidance:1a2b3c4d");
  EXPECT_EQ(groups[2].key.arm, "notes");
  EXPECT_EQ(groups[3].key.arm, "notes+kernel");
  metrics_options opt;
  opt.turn_limits = {1, 2, 4};
  opt.p_values = {0.0, 1.0};
  auto tables = compute_arm_tables(groups, opt);
  // base at T=4: 8 turns, 1 correct (12.5 %), 0 target; notes+kernel at T=1: 0 of 1; T=4: 3 of 4.
  auto md = render_table4_markdown(tables, opt.turn_limits);
  EXPECT_NE(md.find("| m | base | 0.0 / 0.0 / 0.0 |\n|  |  | (0.0 / 0.0 / 12.5) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| m | guidance:1a2b3c4d | 0.0 / 0.0 / 25.0 |\n|  |  | (0.0 / 0.0 / 50.0) |"), std::string::npos) << md;
  EXPECT_NE(md.find("| m | notes | 100.0 / 100.0 / 100.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| m | notes+kernel † | 0.0 / 50.0 / 75.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("† solution-bearing arm"), std::string::npos);
  auto csv = arm_rates_csv(tables.rates);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "model,arch,definition,arm,solution_bearing,turn_limit,n_turns,correct_turns,target_correct_turns,"
            "turn_correctness_rate,target_turn_correctness_rate");
  EXPECT_NE(csv.find("m,sm_90a,gemm,notes+kernel,1,4,4,3,3,0.75,0.75\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("m,sm_90a,gemm,base,0,4,8,1,0,0.125,0\n"), std::string::npos) << csv;
  // Fast^Inst_p per arm: at T=4, p=1.0 only the guidance arm's target-correct 1.3x turn counts (1 of 4).
  auto fast = arm_fast_p_csv(tables.fast_p);
  EXPECT_NE(fast.find("m,sm_90a,gemm,guidance:1a2b3c4d,0,4,1,0.5,0.25,4,1\n"), std::string::npos) << fast;
  EXPECT_NE(fast.find("m,sm_90a,gemm,notes+kernel,1,4,1,0,0,4,1\n"), std::string::npos) << fast;
  EXPECT_TRUE(has_supervision_arms(records));
  EXPECT_FALSE(has_supervision_arms({rec("base", "x", 0, true, true, 1)}));
}

}  // namespace
}  // namespace ptxbench::metrics
