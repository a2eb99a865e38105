// Reading our trajectory files. The fixture run (tests/fixtures/trajectories/run_small) is hand-made:
// 2 variants x 2 trajectories, turn limit 3, every label once or more, one infra-error retry.
#include <algorithm>

#include <gtest/gtest.h>

#include "core/file_io.h"
#include "metrics/aggregate.h"
#include "metrics/trajectory_reader.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {

std::filesystem::path run_dir() { return testing::fixtures_dir() / "trajectories/run_small"; }

ordered_json fixture_json(const std::string& name) {
  auto text = read_text_file(run_dir() / "trajectories" / name, 1 << 20);
  EXPECT_TRUE(text);
  return *parse_json(*text, name);
}

TEST(MetricsTrajectory, ReadsEveryTurnFromStructuredFields) {
  auto run = read_run_dir(run_dir());
  ASSERT_TRUE(run) << run.err().message;
  ASSERT_EQ(run->trajectories.size(), 4u);
  const auto& t0 = run->trajectories[0];
  EXPECT_EQ(t0.id, "base-t0");
  EXPECT_EQ(t0.turn_limit, 3);
  EXPECT_EQ(t0.exit_status, "LimitsExceeded");
  ASSERT_EQ(t0.turns.size(), 3u);
  const auto& good = t0.turns[1];
  EXPECT_EQ(good.model, "fixture-model");
  EXPECT_EQ(good.definition, "gemm_n7168_k5120");
  EXPECT_EQ(good.target, "h200");
  EXPECT_EQ(good.arch, "sm_90a");
  EXPECT_EQ(good.variant, "base");
  EXPECT_EQ(good.trajectory, "base-t0");
  EXPECT_EQ(good.exp_dir, run_dir().string());
  EXPECT_EQ(good.turn, 1);
  EXPECT_EQ(good.label, eval_outcome::passed);
  EXPECT_TRUE(good.target_correct);
  EXPECT_DOUBLE_EQ(*good.speedup, 0.62);
  EXPECT_EQ(good.target_verdict, "executed");
  EXPECT_EQ(good.static_counts->at("GMMA"), 24);
  EXPECT_EQ(good.dynamic_counts->at("TMA"), 4096);
  EXPECT_EQ(*good.reasoning_tokens, 3400);
  EXPECT_EQ(*good.completion_tokens, 3900);
  EXPECT_DOUBLE_EQ(*good.latency_s, 63.0);
  EXPECT_EQ(t0.texts[1].kernel, "__global__ void k1() { /* wgmma */ }\n");
  EXPECT_EQ(t0.texts[1].summary, "All workloads PASSED. Speedup 0.62x vs cuBLASLt.");
  // Correct but the instruction profile failed: never target-correct.
  EXPECT_EQ(t0.turns[2].target_verdict, "profile_error");
  EXPECT_FALSE(t0.turns[2].target_correct);
  EXPECT_FALSE(t0.turns[0].dynamic_counts.has_value());

  const auto& t1 = run->trajectories[1];
  ASSERT_EQ(t1.turns.size(), 4u);  // the infra error and its retry share turn 1
  EXPECT_EQ(t1.turns[0].label, eval_outcome::no_code);
  EXPECT_EQ(t1.turns[1].label, eval_outcome::infra_error);
  EXPECT_EQ(t1.turns[1].turn, 1);
  EXPECT_FALSE(t1.turns[1].counted());
  EXPECT_EQ(t1.turns[2].label, eval_outcome::rejected);
  EXPECT_EQ(t1.turns[2].turn, 1);
}

// Counted by hand from the fixture (see the comment at the top of this file):
// turn 0: CE, EE, RE, correct(0.40, executed); turn 1: correct(0.62, executed), [infra], gate, NE, TO;
// turn 2: correct(0.91, profile_error), correct(1.30, absent_in_sass), correct(1.05, executed).
TEST(MetricsTrajectory, FixtureRunAggregatesAsCountedByHand) {
  auto run = read_run_dir(run_dir());
  ASSERT_TRUE(run);
  auto groups = group_turns(run_records(*run));
  ASSERT_EQ(groups.size(), 1u);
  const auto& turns = groups[0].turns;
  auto r1 = compute_turn_rates(turns, 1), r2 = compute_turn_rates(turns, 2), r3 = compute_turn_rates(turns, 3);
  EXPECT_EQ(r1.n_turns, 4);
  EXPECT_EQ(r1.correct_turns, 1);
  EXPECT_EQ(r1.target_correct_turns, 1);
  EXPECT_EQ(r2.n_turns, 8);
  EXPECT_EQ(r2.correct_turns, 2);
  EXPECT_EQ(r2.target_correct_turns, 2);
  EXPECT_EQ(r3.n_turns, 11);
  EXPECT_EQ(r3.correct_turns, 5);
  EXPECT_EQ(r3.target_correct_turns, 3);
  auto tr3 = compute_trajectory_rates(turns, 3);
  EXPECT_EQ(tr3.n_trajectories, 4);
  EXPECT_EQ(tr3.correct_trajectories, 4);
  EXPECT_EQ(tr3.target_correct_trajectories, 3);
  EXPECT_EQ(compute_trajectory_rates(turns, 1).correct_trajectories, 1);
  auto b3 = compute_best_speedups(turns, 3);
  EXPECT_DOUBLE_EQ(b3.best, 1.3);
  EXPECT_DOUBLE_EQ(b3.best_target, 1.05);
  EXPECT_DOUBLE_EQ(compute_best_speedups(turns, 2).best, 0.62);
  // p = 0.5: base 3 of 6 fast, 1 of 6 also target; multicast 1 of 5, also target.
  auto f = compute_fast_p(turns, 3, {0.5});
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].n_variants, 2);
  EXPECT_DOUBLE_EQ(f[0].fast, (3.0 / 6 + 1.0 / 5) / 2);
  EXPECT_DOUBLE_EQ(f[0].inst, (1.0 / 6 + 1.0 / 5) / 2);
  EXPECT_DOUBLE_EQ(f[0].fast_max, 0.5);
  EXPECT_DOUBLE_EQ(f[0].inst_min, 1.0 / 6);
}

TEST(MetricsTrajectory, RejectsContradictionsWithTheJsonPath) {
  auto j = fixture_json("base-t0.json");
  j["messages"][5]["extra"]["ptxbench"]["label"] = "ok";
  auto a = trajectory_from_json(j, "x", "run");
  ASSERT_FALSE(a);
  EXPECT_EQ(a.err().message.rfind("messages[5].extra.ptxbench.label: unknown label 'ok' (expected one of: passed,", 0), 0u)
      << a.err().message;

  j = fixture_json("base-t0.json");
  j["messages"][7]["extra"]["ptxbench"]["target_correct"] = true;  // profile_error turn claims target-correct
  auto b = trajectory_from_json(j, "x", "run");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.err().message,
            "messages[7].extra.ptxbench.target_correct: is true but label 'correct' with target_verdict "
            "'profile_error' makes it false");

  j = fixture_json("base-t0.json");
  j["messages"][3]["extra"]["all_passed"] = true;  // compilation error that claims all passed
  auto c = trajectory_from_json(j, "x", "run");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.err().message, "messages[3].extra.ptxbench.label: 'compilation_error' contradicts extra.all_passed = true");

  j = fixture_json("base-t0.json");
  j["info"]["ptxbench"].erase("model");
  EXPECT_EQ(trajectory_from_json(j, "x", "run").err().message, "info.ptxbench.model: missing required field");

  j = fixture_json("base-t0.json");
  j["messages"][4]["role"] = "user";
  EXPECT_EQ(trajectory_from_json(j, "x", "run").err().message, "messages[4]: expected role 'assistant', got 'user'");

  j = fixture_json("base-t0.json");
  j["messages"][3]["extra"]["ptxbench"]["target_verdict"] = "maybe";
  EXPECT_EQ(trajectory_from_json(j, "x", "run").err().message,
            "messages[3].extra.ptxbench.target_verdict: unknown target verdict 'maybe'");
}

TEST(MetricsTrajectory, AnUnevaluatedLastReplyIsNotATurn) {
  auto j = fixture_json("multicast-t1.json");
  auto& msgs = j["messages"];
  msgs.erase(msgs.size() - 1);  // drop the exit message
  msgs.erase(msgs.size() - 1);  // and the last feedback: the run was interrupted mid-turn
  auto t = trajectory_from_json(j, "x", "run");
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->turns.size(), 1u);
}

TEST(MetricsTrajectory, RunDirErrorsAreOneLine) {
  auto dir = testing::make_temp_dir("metrics-run");
  auto a = read_run_dir(dir);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.err().message, dir.string() + ": not a run directory (no trajectories/ folder inside) nor a Harbor job (no trial folder with agent/ or verifier/ inside)");
  std::filesystem::create_directories(dir / "trajectories");
  EXPECT_EQ(read_run_dir(dir).err().message, (dir / "trajectories").string() + ": no *.json trajectory files");
  ASSERT_TRUE(write_file_atomic(dir / "trajectories/t.json", "{\"info\": [}"));
  auto c = read_run_dir(dir);
  ASSERT_FALSE(c);
  EXPECT_NE(c.err().message.find("t.json: invalid JSON at line 1"), std::string::npos) << c.err().message;
  std::filesystem::remove_all(dir);
}

TEST(MetricsTrajectory, LastCodeBlock) {
  EXPECT_EQ(last_code_block("a\n```cpp\nx\n```\nb\n```cuda\ny\nz\n```\n"), "y\nz\n");
  EXPECT_EQ(last_code_block("```\nonly\n```\n```\nunclosed\n"), "only\n");
  EXPECT_EQ(last_code_block("no fences"), "no fences");
}

TEST(MetricsTrajectory, RecordsExportAsCsvAndJson) {
  auto run = read_run_dir(run_dir());
  ASSERT_TRUE(run);
  auto records = run_records(*run);
  auto csv = records_to_csv(records);
  auto first_line = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(first_line,
            "model,target,arch,language,definition,exp_dir,variant,trajectory,turn,label,source_label,correct,target_correct,"
            "speedup,target_verdict,arch_tag,static_counts,dynamic_counts,reasoning_tokens,completion_tokens,"
            "latency_s,cost_usd,coverage,arm");
  EXPECT_NE(csv.find(",base-t0,1,passed,correct,1,1,0.62,executed,,GMMA=24;TMA=2,GMMA=1048576;TMA=4096,3400,3900,63,0.02,,base\n"),
            std::string::npos)
      << csv;
  // The one JSON writer: valid JSON, one record per line, even for awkward strings.
  const std::string awkward = "a \"quoted\" \\ name\nwith\tcontrol \x01 and é";
  records[0].model = awkward;
  auto text = records_to_json_text(records);
  auto parsed = parse_json(text, "turns.json");
  ASSERT_TRUE(parsed) << parsed.err().message;
  const auto& j = *parsed;
  ASSERT_EQ(j.size(), 12u);
  EXPECT_EQ(j[0]["model"], awkward);
  EXPECT_EQ(j[1]["static_counts"]["GMMA"], 24);
  EXPECT_EQ(j[1]["label"], "passed");
  EXPECT_EQ(j[1]["source_label"], "correct");
  EXPECT_DOUBLE_EQ(j[1]["speedup"].get<double>(), 0.62);
  EXPECT_TRUE(j[0]["speedup"].is_null());
  EXPECT_TRUE(j[0]["target"].is_null() || j[0]["target"].is_string());
  EXPECT_EQ(j[4]["label"], "infra_error");
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 12 + 2);  // one record per line
}

}  // namespace
}  // namespace ptxbench::metrics
