// The seeded, proportional cap behind `fixit mine --cap-per-definition` and `fixit pairs`
// (adapt/stratified_cap.h): its allocation rule, its independence from input order, and the seed.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "adapt/stratified_cap.h"

namespace ptxbench::adapt {
namespace {

std::vector<strat_item> items(const std::map<std::string, int>& sizes, const std::string& group = "gemm") {
  std::vector<strat_item> out;
  for (const auto& [stratum, n] : sizes)
    for (int i = 0; i < n; ++i) out.push_back({group, stratum, group + "/" + stratum + "/" + std::to_string(i)});
  return out;
}

std::set<std::string> ids(const std::vector<strat_item>& in, const stratified_selection& s) {
  std::set<std::string> out;
  for (std::size_t i : s.selected) out.insert(in[i].id);
  return out;
}

TEST(StratifiedCap, EveryStratumFirstThenTheRestInProportionToSizeMinusOne) {
  auto in = items({{"compile/turn0", 20}, {"numerical/turn1", 10}, {"runtime/turn2", 3}, {"timeout/turn2", 1}});
  auto s = stratified_cap(in, 12, 0);
  // 4 strata get one each; the other 8 by (19, 9, 2, 0) / 30: 5.07, 2.4, 0.53, 0 -> 5, 2, 0 + largest remainders.
  EXPECT_EQ(s.strata["gemm"]["compile/turn0"].selected, 6);
  EXPECT_EQ(s.strata["gemm"]["numerical/turn1"].selected, 3);
  EXPECT_EQ(s.strata["gemm"]["runtime/turn2"].selected, 2);
  EXPECT_EQ(s.strata["gemm"]["timeout/turn2"].selected, 1);
  EXPECT_EQ(s.selected.size(), 12u);
  EXPECT_EQ(s.strata["gemm"]["compile/turn0"].candidates, 20);
}

TEST(StratifiedCap, ACapBelowTheNumberOfStrataGoesToTheLargest) {
  auto in = items({{"a", 5}, {"b", 1}, {"c", 3}, {"d", 2}});
  auto s = stratified_cap(in, 2, 9);
  EXPECT_EQ(s.strata["gemm"]["a"].selected, 1);
  EXPECT_EQ(s.strata["gemm"]["c"].selected, 1);
  EXPECT_EQ(s.strata["gemm"]["b"].selected + s.strata["gemm"]["d"].selected, 0);
}

TEST(StratifiedCap, SmallGroupsAndNoCapKeepEverything) {
  auto in = items({{"a", 2}, {"b", 1}});
  auto more = items({{"a", 40}}, "attention");
  in.insert(in.end(), more.begin(), more.end());
  auto s = stratified_cap(in, 3, 1);  // per group: gemm has 3, attention is capped
  EXPECT_EQ(s.strata["gemm"]["a"].selected, 2);
  EXPECT_EQ(s.strata["gemm"]["b"].selected, 1);
  EXPECT_EQ(s.strata["attention"]["a"].selected, 3);
  EXPECT_EQ(stratified_cap(in, -1, 1).selected.size(), in.size());
}

TEST(StratifiedCap, TheSelectionDependsOnTheSeedAndTheIdsNeverOnInputOrder) {
  auto in = items({{"a", 30}, {"b", 12}, {"c", 4}});
  auto first = ids(in, stratified_cap(in, 10, 42));
  auto shuffled = in;
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    EXPECT_EQ(ids(shuffled, stratified_cap(shuffled, 10, 42)), first);
  }
  int differ = 0;
  for (uint64_t seed = 0; seed < 8; ++seed) differ += ids(in, stratified_cap(in, 10, seed)) != first ? 1 : 0;
  EXPECT_GE(differ, 6);  // 10 of 46 items: another seed picks other items almost always
  EXPECT_EQ(seeded_key(42, "x"), seeded_key(42, "x"));
  EXPECT_NE(seeded_key(42, "x"), seeded_key(43, "x"));
}

}  // namespace
}  // namespace ptxbench::adapt
