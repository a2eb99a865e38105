// The proportional cap behind `fixit mine --cap-per-definition` (and the post-balancing caps of
// `fixit pairs` and `kernelgen collect`), adapt/stratified_cap.h: upstream's largest-remainder rule
// (build_rebalanced_fixit_error_collection.py) by default, with the expectations below worked out
// from that rule by hand; the every-stratum rule and the seeded order as options; the underfilled
// error.
#include <algorithm>
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "adapt/error_type.h"
#include "adapt/stratified_cap.h"

namespace ptxbench::adapt {
namespace {

// One stratum per (error type, turn), named as `fixit mine` names them and sorted as upstream's keys.
struct stratum_spec {
  error_type type;
  int turn;
  int size;
};

std::string name_of(const stratum_spec& s) { return error_type_name(s.type) + "/turn" + std::to_string(s.turn); }

std::vector<strat_item> items(const std::vector<stratum_spec>& strata, const std::string& group = "gemm") {
  std::vector<strat_item> out;
  for (const auto& s : strata)
    for (int i = 0; i < s.size; ++i) {
      std::string id = group + "/" + name_of(s) + "/" + std::to_string(i);
      char order[16];
      std::snprintf(order, sizeof order, "%04d", i);
      out.push_back({group, name_of(s), upstream_error_label(s.type) + "\x1f" + std::to_string(s.turn), order, id});
    }
  return out;
}

stratified_selection cap_of(const std::vector<strat_item>& in, int cap, std::optional<uint64_t> seed = std::nullopt,
                            cap_rule rule = cap_rule::upstream) {
  cap_options o;
  o.cap = cap;
  o.seed = seed;
  o.rule = rule;
  auto s = stratified_cap(in, o);
  EXPECT_TRUE(s) << s.err().message;
  return s ? *s : stratified_selection{};
}

std::set<std::string> ids(const std::vector<strat_item>& in, const stratified_selection& s) {
  std::set<std::string> out;
  for (std::size_t i : s.selected) out.insert(in[i].id);
  return out;
}

int selected(stratified_selection& s, const std::string& stratum) { return s.strata["gemm"][stratum].selected; }

// The example: 8 compile rows and 1 numerical row with cap 3. 8*3/9 = 2.67 and 1*3/9 = 0.33
// floor to 2 and 0; the one slot left goes to the larger remainder (compile): 3/0.
TEST(StratifiedCap, UpstreamRuleKeepsThreeCompileRowsAndNoNumericalOne) {
  auto in = items({{error_type::compile, 0, 8}, {error_type::numerical, 1, 1}});
  auto s = cap_of(in, 3);
  EXPECT_EQ(selected(s, "compile/turn0"), 3);
  EXPECT_EQ(selected(s, "numerical/turn1"), 0);
  // The first rows in the stable order, as upstream's (rows sorted by turn, trajectory, run, path).
  EXPECT_EQ(ids(in, s), (std::set<std::string>{"gemm/compile/turn0/0", "gemm/compile/turn0/1", "gemm/compile/turn0/2"}));
  // The every-stratum option keeps one numerical row first: 2/1.
  auto every = cap_of(in, 3, std::nullopt, cap_rule::every_stratum);
  EXPECT_EQ(selected(every, "compile/turn0"), 2);
  EXPECT_EQ(selected(every, "numerical/turn1"), 1);
}

TEST(StratifiedCap, FloorsThenTheLargestRemainders) {
  // 20, 10, 3, 1 of 34 with cap 12: 7.06, 3.53, 1.06, 0.35 -> floors 7, 3, 1, 0 (11); the last slot
  // to the largest remainder, numerical's 0.53.
  auto in = items({{error_type::compile, 0, 20}, {error_type::numerical, 1, 10}, {error_type::runtime, 2, 3},
                   {error_type::timeout, 2, 1}});
  auto s = cap_of(in, 12);
  EXPECT_EQ(selected(s, "compile/turn0"), 7);
  EXPECT_EQ(selected(s, "numerical/turn1"), 4);
  EXPECT_EQ(selected(s, "runtime/turn2"), 1);
  EXPECT_EQ(selected(s, "timeout/turn2"), 0);
  EXPECT_EQ(s.selected.size(), 12u);
  EXPECT_EQ(s.strata["gemm"]["compile/turn0"].candidates, 20);
  // 4, 3, 2, 1 of 10 with cap 6: 2.4, 1.8, 1.2, 0.6 -> 2, 1, 1, 0; remainders .8 (numerical), .6 (timeout).
  auto in2 = items({{error_type::compile, 0, 4}, {error_type::numerical, 1, 3}, {error_type::runtime, 2, 2},
                    {error_type::timeout, 2, 1}});
  auto s2 = cap_of(in2, 6);
  EXPECT_EQ(selected(s2, "compile/turn0"), 2);
  EXPECT_EQ(selected(s2, "numerical/turn1"), 2);
  EXPECT_EQ(selected(s2, "runtime/turn2"), 1);
  EXPECT_EQ(selected(s2, "timeout/turn2"), 1);
  EXPECT_EQ(largest_remainder_counts({4, 3, 2, 1}, {"a", "b", "c", "d"}, 6), (std::vector<int>{2, 2, 1, 1}));
}

TEST(StratifiedCap, TiesGoToTheLargerStratumThenUpstreamsKeyOrder) {
  // Equal remainders and sizes: upstream's keys decide. "Kernel Execution Timeout" sorts before
  // "Numerical error" (our names would sort the other way).
  auto in = items({{error_type::numerical, 0, 1}, {error_type::timeout, 0, 1}});
  auto s = cap_of(in, 1);
  EXPECT_EQ(selected(s, "timeout/turn0"), 1);
  EXPECT_EQ(selected(s, "numerical/turn0"), 0);
  // Turns compare as text, as upstream's CSV strings did: "10" before "2".
  auto turns = items({{error_type::compile, 2, 1}, {error_type::compile, 10, 1}});
  auto t = cap_of(turns, 1);
  EXPECT_EQ(selected(t, "compile/turn10"), 1);
  EXPECT_EQ(selected(t, "compile/turn2"), 0);
  // 2, 2 and 4 of 8 with cap 2: .5, .5, 1 -> floors 0, 0, 1; the last slot to one of the two equal
  // remainders of equal size: the smaller key ("a").
  EXPECT_EQ(largest_remainder_counts({2, 2, 4}, {"b", "a", "c"}, 2), (std::vector<int>{0, 1, 1}));
  // Equal remainders, different sizes: the larger stratum. 1 and 3 of 4 with cap 2: .5 and 1.5 -> 0, 1;
  // the slot to the larger stratum (3), whatever the keys say.
  EXPECT_EQ(largest_remainder_counts({1, 3}, {"a", "b"}, 2), (std::vector<int>{0, 2}));
}

TEST(StratifiedCap, AGroupBelowTheCapStopsUnlessAllowed) {
  auto in = items({{error_type::compile, 0, 2}, {error_type::runtime, 1, 1}});
  cap_options o;
  o.cap = 33;
  auto err = stratified_cap(in, o);
  ASSERT_FALSE(err);
  EXPECT_EQ(err.err().message,
            "gemm has only 3 rows, need 33; lower --cap-per-definition or pass --allow-underfilled-definitions");
  o.allow_underfilled = true;
  auto s = stratified_cap(in, o);
  ASSERT_TRUE(s) << s.err().message;
  EXPECT_EQ(s->selected.size(), 3u);
  EXPECT_EQ(s->underfilled, std::vector<std::string>{"gemm"});
  // Exactly the cap is not underfilled; no cap keeps everything.
  o.cap = 3;
  o.allow_underfilled = false;
  ASSERT_TRUE(stratified_cap(in, o));
  EXPECT_EQ(cap_of(in, -1).selected.size(), in.size());
}

TEST(StratifiedCap, EveryStratumRuleGivesEachStratumOneFirst) {
  auto in = items({{error_type::compile, 0, 20}, {error_type::numerical, 1, 10}, {error_type::runtime, 2, 3},
                   {error_type::timeout, 2, 1}});
  auto s = cap_of(in, 12, std::nullopt, cap_rule::every_stratum);
  // 4 strata get one each; the other 8 by (19, 9, 2, 0) / 30: 5.07, 2.4, 0.53, 0 -> 5, 2, 0 + largest remainders.
  EXPECT_EQ(selected(s, "compile/turn0"), 6);
  EXPECT_EQ(selected(s, "numerical/turn1"), 3);
  EXPECT_EQ(selected(s, "runtime/turn2"), 2);
  EXPECT_EQ(selected(s, "timeout/turn2"), 1);
  // Fewer slots than strata: the largest get one each.
  auto few = cap_of(in, 2, std::nullopt, cap_rule::every_stratum);
  EXPECT_EQ(selected(few, "compile/turn0"), 1);
  EXPECT_EQ(selected(few, "numerical/turn1"), 1);
  EXPECT_EQ(selected(few, "runtime/turn2") + selected(few, "timeout/turn2"), 0);
}

TEST(StratifiedCap, TheSelectionNeverDependsOnInputOrderAndASeedPicksOtherRows) {
  auto in = items({{error_type::compile, 0, 30}, {error_type::numerical, 1, 12}, {error_type::runtime, 2, 4}});
  auto stable = ids(in, cap_of(in, 10));
  auto seeded = ids(in, cap_of(in, 10, 42));
  auto shuffled = in;
  std::mt19937 rng(7);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    EXPECT_EQ(ids(shuffled, cap_of(shuffled, 10)), stable);
    EXPECT_EQ(ids(shuffled, cap_of(shuffled, 10, 42)), seeded);
  }
  int differ = 0;
  auto counts = cap_of(in, 10);
  for (uint64_t seed = 0; seed < 8; ++seed) {
    auto s = cap_of(in, 10, seed);
    differ += ids(in, s) != stable ? 1 : 0;
    for (const char* stratum : {"compile/turn0", "numerical/turn1", "runtime/turn2"})
      EXPECT_EQ(selected(s, stratum), selected(counts, stratum)) << stratum;  // the seed changes rows, not counts
  }
  EXPECT_GE(differ, 6);  // 10 of 46 items: another order picks other items almost always
  EXPECT_EQ(seeded_key(42, "x"), seeded_key(42, "x"));
  EXPECT_NE(seeded_key(42, "x"), seeded_key(43, "x"));
}

}  // namespace
}  // namespace ptxbench::adapt
