#include "agent/history.h"

#include <gtest/gtest.h>

namespace ptxbench::agent {
namespace {

conversation three_turns(std::size_t pair_chars) {
  conversation c;
  c.system = {"system", "sys", ""};
  c.task = {"user", "task", ""};
  for (int k = 0; k < 3; ++k)
    c.pairs.push_back({{"assistant", "reply " + std::to_string(k) + std::string(pair_chars, 'x'), ""},
                       {"user", "feedback " + std::to_string(k), ""}});
  return c;
}

TEST(History, FullSendsEverythingInOrder) {
  auto v = build_context(three_turns(10), history_policy::full, std::nullopt, token_estimator{}, 0);
  ASSERT_EQ(v.messages.size(), 8u);
  EXPECT_EQ(v.messages[2].content.substr(0, 7), "reply 0");
  EXPECT_EQ(v.messages[7].content, "feedback 2");
  EXPECT_EQ(v.sent_turns, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(v.dropped_turns.empty());
  EXPECT_EQ(v.messages[1].content, "task");
}

TEST(History, LatestPairSendsOnlyTheLastTurnWithoutCallingItADrop) {
  auto v = build_context(three_turns(10), history_policy::latest_pair, std::nullopt, token_estimator{}, 0);
  ASSERT_EQ(v.messages.size(), 4u);
  EXPECT_EQ(v.messages[3].content, "feedback 2");
  EXPECT_TRUE(v.dropped_turns.empty());
}

TEST(History, BudgetDropsOldestPairsAndSaysSo) {
  token_estimator est;
  est.calibrate(1000, 1000);  // one token per character
  // Each pair is ~1050 characters with its framing, the system and task ~240: 2400 tokens fit two pairs.
  auto v = build_context(three_turns(1000), history_policy::budget, 2400, est, 0);
  EXPECT_EQ(v.dropped_turns, (std::vector<int>{0}));
  EXPECT_EQ(v.sent_turns, (std::vector<int>{1, 2}));
  EXPECT_LE(v.estimated_prompt_tokens, 2400);
  EXPECT_NE(v.messages[1].content.find("earliest attempt(s)"), std::string::npos);
}

TEST(History, ForcedDropsAfterAnOverflowComeOnTopOfTheBudget) {
  auto v = build_context(three_turns(10), history_policy::full, std::nullopt, token_estimator{}, 2);
  EXPECT_EQ(v.dropped_turns, (std::vector<int>{0, 1}));
  EXPECT_EQ(v.sent_turns, (std::vector<int>{2}));
  auto all = build_context(three_turns(10), history_policy::full, std::nullopt, token_estimator{}, 5);
  EXPECT_TRUE(all.sent_turns.empty());
  EXPECT_EQ(all.messages.size(), 2u);
}

TEST(History, PolicyNames) {
  for (auto p : {history_policy::full, history_policy::latest_pair, history_policy::budget})
    EXPECT_EQ(parse_history_policy(history_policy_name(p)), p);
  EXPECT_FALSE(parse_history_policy("single-user"));
}

}  // namespace
}  // namespace ptxbench::agent
