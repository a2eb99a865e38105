#include "agent/trajectory.h"

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "test_support.h"

namespace ptxbench::agent {
namespace {

ordered_json assistant(int k) { return {{"role", "assistant"}, {"content", "reply " + std::to_string(k)}, {"extra", {{"turn", k}}}}; }
ordered_json feedback(int k, const std::string& event = "evaluation") {
  return {{"role", "user"}, {"content", "<returncode>1</returncode>\n<output>\nno</output>"},
          {"extra", {{"turn", k}, {"event", event}, {"ptxbench", {{"label", "compilation_error"}}}}}};
}

trajectory two_turn_trajectory() {
  trajectory_meta meta{"m", "gemm_n7168_k5120", "h200", "sm_90a", "minimal", 1, 4, 1.2, "full", 99};
  auto t = trajectory::start(meta, {{"agent", {{"step_limit", 4}}}}, {"system prompt", "task prompt"});
  t.append_turn(assistant(0), feedback(0));
  t.append_turn(assistant(1), feedback(1));
  return t;
}

TEST(Trajectory, SavesAndLoadsInUpstreamsLayout) {
  auto dir = ptxbench::testing::make_temp_dir("traj");
  auto t = two_turn_trajectory();
  t.begin_call({{"turn", 2}});
  t.end_call(0.5, true);
  t.begin_call({{"turn", 2}});
  t.end_call(std::nullopt, true);
  t.begin_call({{"turn", 2}});
  t.end_call(std::nullopt, false);  // never sent: not a call
  ASSERT_TRUE(t.save(dir / "t.json"));
  auto loaded = trajectory::load(dir / "t.json");
  ASSERT_TRUE(loaded) << loaded.err().message;
  const auto& j = loaded->json();
  EXPECT_EQ(j["trajectory_format"], "mini-swe-agent-1.1");
  EXPECT_EQ(j["info"]["config"]["agent"]["step_limit"], 4);
  EXPECT_EQ(j["info"]["model_stats"]["api_calls"], 2);
  EXPECT_DOUBLE_EQ(j["info"]["model_stats"]["instance_cost"].get<double>(), 0.5);
  EXPECT_EQ(j["info"]["model_stats"]["calls_without_cost"], 1);
  EXPECT_FALSE(j["info"]["ptxbench"].contains("open_call"));
  EXPECT_EQ(j["info"]["ptxbench"]["seed"], 99);
  EXPECT_EQ(j["messages"][2]["role"], "assistant");
  EXPECT_EQ(j["messages"][5]["extra"]["turn"], 1);
  EXPECT_EQ(loaded->completed_turns(), 2);
  EXPECT_EQ(loaded->meta().variant, "minimal");
  EXPECT_EQ(loaded->to_conversation().pairs.size(), 2u);
  std::filesystem::remove_all(dir);
}

TEST(Trajectory, LoadRejectsBrokenAlternation) {
  auto dir = ptxbench::testing::make_temp_dir("traj");
  auto t = two_turn_trajectory();
  auto doc = t.json();
  doc["messages"][5]["extra"]["turn"] = 7;
  ASSERT_TRUE(write_file_atomic(dir / "bad.json", doc.dump()));
  auto r = trajectory::load(dir / "bad.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("messages[5]: extra.turn: expected 1"), std::string::npos) << r.err().message;
  doc = t.json();
  std::swap(doc["messages"][2], doc["messages"][3]);
  ASSERT_TRUE(write_file_atomic(dir / "bad.json", doc.dump()));
  r = trajectory::load(dir / "bad.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("messages[2]: expected role 'assistant', got 'user'"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(Trajectory, TrimKeepsCompletedTurnsAndHandsBackAnInfraFailedReply) {
  auto t = two_turn_trajectory();
  t.append_turn(assistant(2), feedback(2, "infra_error"));
  EXPECT_EQ(t.completed_turns(), 2);
  auto pending = t.trim_to_completed();
  ASSERT_TRUE(pending);
  EXPECT_EQ((*pending)["content"], "reply 2");
  EXPECT_EQ(t.json()["messages"].size(), 6u);

  auto u = two_turn_trajectory();
  u.set_exit(exit_names::limits_exceeded, "", ordered_json{{"role", "exit"}, {"content", "LimitsExceeded"}});
  EXPECT_FALSE(u.finished(4));  // only 2 of 4 turns done
  EXPECT_TRUE(u.finished(2));
  EXPECT_FALSE(u.trim_to_completed());
  EXPECT_EQ(u.json()["messages"].size(), 6u);  // the exit message is gone
}

// A kill during a model call leaves the call open on disk: resume keeps it counted, with an unknown
// cost, and says so; a kill during an evaluation leaves the reply, which resume evaluates again.
TEST(Trajectory, AnOpenCallIsSettledAsLostAndASavedReplyIsHandedBack) {
  auto dir = ptxbench::testing::make_temp_dir("traj");
  auto t = two_turn_trajectory();
  t.begin_call({{"turn", 2}, {"started", "then"}});
  ASSERT_TRUE(t.save(dir / "t.json"));
  auto loaded = trajectory::load(dir / "t.json");
  ASSERT_TRUE(loaded) << loaded.err().message;
  EXPECT_EQ(loaded->json()["info"]["model_stats"]["api_calls"], 1);
  EXPECT_TRUE(loaded->settle_lost_call("now"));
  EXPECT_FALSE(loaded->settle_lost_call("again"));
  const auto& j = loaded->json();
  EXPECT_EQ(j["info"]["model_stats"]["api_calls"], 1);
  EXPECT_EQ(j["info"]["model_stats"]["calls_without_cost"], 1);
  ASSERT_EQ(j["info"]["ptxbench"]["interruptions"].size(), 1u);
  EXPECT_EQ(j["info"]["ptxbench"]["interruptions"][0]["kind"], "lost_call");
  EXPECT_EQ(j["info"]["ptxbench"]["interruptions"][0]["turn"], 2);
  EXPECT_FALSE(j["info"]["ptxbench"].contains("open_call"));

  auto u = two_turn_trajectory();
  u.append_reply(assistant(2));
  ASSERT_TRUE(u.save(dir / "u.json"));
  auto reread = trajectory::load(dir / "u.json");
  ASSERT_TRUE(reread) << reread.err().message;
  EXPECT_EQ(reread->completed_turns(), 2);
  auto pending = reread->trim_to_completed();
  ASSERT_TRUE(pending);
  EXPECT_EQ((*pending)["content"], "reply 2");
  EXPECT_EQ(reread->json()["messages"].size(), 6u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ptxbench::agent
