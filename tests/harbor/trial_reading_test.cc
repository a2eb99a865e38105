// Reading Harbor trial folders: what each file contributes (Harbor's result.json and config.json,
// the ATIF trajectory, the verifier's files), which problems are missing data (noted, the read goes
// on) and which are wrong data (the read fails, naming the file and the JSON path).
#include <gtest/gtest.h>

#include "core/file_io.h"
#include "harbor/atif_trajectory.h"
#include "harbor/trial.h"
#include "test_support.h"

namespace ptxbench::harbor {
namespace {
namespace fs = std::filesystem;

ordered_json verdict_json(const std::string& outcome) {
  return {{"format", "ptxbench.verdict/1"}, {"mode", "eval"}, {"task", "gemm_n7168_k5120"}, {"target", "h200"},
          {"outcome", outcome}, {"message", outcome}};
}

ordered_json atif(ordered_json steps) {
  return {{"schema_version", "ATIF-v1.4"},
          {"session_id", "s1"},
          {"agent", {{"name", "mini-swe-agent"}, {"version", "1.0"}, {"model_name", "openai/gpt-5"}}},
          {"steps", std::move(steps)}};
}

ordered_json agent_step(int id, const std::string& output, ordered_json metrics = nullptr) {
  ordered_json s = {{"step_id", id},
                    {"source", "agent"},
                    {"message", "running ptxbench eval"},
                    {"tool_calls", {{{"tool_call_id", "c" + std::to_string(id)}, {"function_name", "bash"},
                                     {"arguments", {{"command", "ptxbench eval kernel.cu --json"}}}}}},
                    {"observation", {{"results", {{{"source_call_id", "c" + std::to_string(id)}, {"content", output}}}}}}};
  if (!metrics.is_null()) s["metrics"] = std::move(metrics);
  return s;
}

TEST(AtifTrajectory, ReadsTheStepsThatEvaluatedAKernelAndTheirUsage) {
  ordered_json steps = {{{"step_id", 1}, {"source", "user"}, {"message", "write a kernel"}},
                        agent_step(2, "<output>\n" + dump_pretty(verdict_json("compile_error")) + "\n</output>",
                                   {{"prompt_tokens", 100}, {"completion_tokens", 40}, {"cost_usd", 0.01},
                                    {"extra", {{"reasoning_tokens", 12}}}}),
                        agent_step(3, "ls\nkernel.cu\n"),
                        agent_step(4, verdict_json("passed").dump())};
  // Newer ATIF: content as a list of parts.
  steps[3]["observation"]["results"][0]["content"] = {{{"type", "text"}, {"text", verdict_json("passed").dump()}}};
  auto a = atif_from_json(atif(steps));
  ASSERT_TRUE(a) << a.err().message;
  EXPECT_EQ(a->agent_name, "mini-swe-agent");
  EXPECT_EQ(a->model_name, "openai/gpt-5");
  ASSERT_EQ(a->steps.size(), 4u);
  EXPECT_TRUE(a->steps[0].verdicts.empty());
  ASSERT_EQ(a->steps[1].verdicts.size(), 1u);
  EXPECT_EQ(a->steps[1].verdicts[0]["outcome"], "compile_error");
  EXPECT_EQ(a->steps[1].completion_tokens, 40);
  EXPECT_EQ(a->steps[1].reasoning_tokens, 12);
  EXPECT_DOUBLE_EQ(a->steps[1].cost_usd.value_or(0), 0.01);
  EXPECT_TRUE(a->steps[2].verdicts.empty());
  ASSERT_EQ(a->steps[3].verdicts.size(), 1u);
  EXPECT_EQ(a->steps[3].verdicts[0]["outcome"], "passed");
}

TEST(AtifTrajectory, MalformedTrajectoriesNameTheJsonPath) {
  auto steps = [] { return ordered_json{agent_step(1, "x"), agent_step(2, "y")}; };
  auto error = [](const ordered_json& j) {
    auto a = atif_from_json(j);
    return a ? std::string("read") : a.err().message;
  };
  EXPECT_EQ(error(ordered_json::array()), "expected object, got array");
  auto j = atif(steps());
  j["schema_version"] = "1.4";
  EXPECT_EQ(error(j), "schema_version: '1.4' is not an ATIF version (ATIF-v1.x)");
  j = atif(steps());
  j.erase("agent");
  EXPECT_EQ(error(j), "agent: missing required field");
  j = atif(steps());
  j["steps"][1]["step_id"] = 1;
  EXPECT_EQ(error(j), "steps[1].step_id: 1 follows step 1; step ids must increase");
  j = atif(steps());
  j["steps"][0]["source"] = "tool";
  EXPECT_EQ(error(j), "steps[0].source: 'tool' (expected system, user or agent)");
  j = atif(steps());
  j["steps"][0]["step_id"] = "one";
  EXPECT_EQ(error(j), "steps[0].step_id: expected integer, got string");
  j = atif(steps());
  j["steps"][1]["observation"]["results"] = "none";
  EXPECT_EQ(error(j), "steps[1].observation.results: expected array, got string");
  j = atif(steps());
  j["steps"][1]["metrics"]["completion_tokens"] = "many";
  EXPECT_EQ(error(j), "steps[1].metrics.completion_tokens: expected integer, got string");
}

class TrialReading : public ::testing::Test {
 protected:
  void SetUp() override { m_dir = testing::make_temp_dir("harbor-trial"); }
  void TearDown() override { fs::remove_all(m_dir); }
  void put(const std::string& relative, const std::string& text) {
    ASSERT_TRUE(write_file_atomic(m_dir / relative, text));
  }
  fs::path m_dir;
};

TEST_F(TrialReading, ReadsHarborsFilesTheVerifiersAndTheTrajectory) {
  put("t1/result.json", R"({"task_name": "gemm_n7168_k5120", "trial_name": "t1",
      "agent_info": {"name": "claude-code", "version": "2.0", "model_info": {"name": "claude-sonnet-4", "provider": "anthropic"}},
      "exception_info": null, "verifier_result": {"rewards": {"reward": 1.0}}})");
  put("t1/verifier/reward.txt", "1\n");
  put("t1/verifier/ptxbench.json", R"({"format": "ptxbench.harbor-verifier/1", "task": "gemm_n7168_k5120",
      "target": "h200", "variant": "base", "kernel": "/workspace/kernel.cu", "kernel_state": "present",
      "exit_code": 0, "outcome": "passed", "target_correct": true, "speedup": 1.5, "reward": 1, "message": "ok"})");
  put("t1/verifier/verdict.json", verdict_json("passed").dump());
  put("t1/verifier/kernel.cu", "// the kernel\n");
  put("t1/agent/trajectory.json", atif({agent_step(1, verdict_json("passed").dump())}).dump());
  put("t2/agent/trajectory.json", "{ torn");
  put("t2/config.json", R"({"agent": {"name": "codex", "model_name": "openai/gpt-5"}})");
  put("not-a-trial/readme.txt", "x");

  auto dirs = trial_dirs(m_dir);
  ASSERT_TRUE(dirs) << dirs.err().message;
  ASSERT_EQ(dirs->size(), 2u);
  auto t1 = read_trial((*dirs)[0]);
  ASSERT_TRUE(t1) << t1.err().message;
  EXPECT_EQ(t1->name, "t1");
  EXPECT_EQ(t1->task_name, "gemm_n7168_k5120");
  EXPECT_EQ(t1->agent, "claude-code");
  EXPECT_EQ(t1->model, "anthropic/claude-sonnet-4");
  EXPECT_EQ(t1->reward, 1.0);
  ASSERT_TRUE(t1->summary);
  EXPECT_EQ(t1->summary->reward, 1);
  EXPECT_EQ(t1->summary->speedup, 1.5);
  ASSERT_TRUE(t1->final_verdict);
  EXPECT_EQ(t1->final_kernel, "// the kernel\n");
  ASSERT_TRUE(t1->trajectory);
  EXPECT_TRUE(t1->unreadable.empty());
  // A torn trajectory is missing data: noted, the rest of the trial is read.
  auto t2 = read_trial((*dirs)[1]);
  ASSERT_TRUE(t2) << t2.err().message;
  EXPECT_EQ(t2->agent, "codex");
  EXPECT_EQ(t2->model, "openai/gpt-5");
  EXPECT_FALSE(t2->trajectory);
  ASSERT_EQ(t2->unreadable.size(), 1u);
  EXPECT_NE(t2->unreadable[0].find("trajectory.json: invalid JSON"), std::string::npos) << t2->unreadable[0];

  auto none = trial_dirs(m_dir / "not-a-trial");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.err().message, (m_dir / "not-a-trial").string() +
                                    ": not a Harbor job directory (no trial folder with agent/ or verifier/ inside)");
}

TEST_F(TrialReading, WrongVerifierFilesFailTheReadNamingThem) {
  put("t/verifier/reward.txt", "yes\n");
  auto t = read_trial(m_dir / "t");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.err().message, (m_dir / "t" / "verifier" / "reward.txt").string() + ": expected a number, got 'yes'");
  put("t/verifier/reward.txt", "0\n");
  put("t/verifier/verdict.json", R"({"format": "something else"})");
  t = read_trial(m_dir / "t");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.err().message, (m_dir / "t" / "verifier" / "verdict.json").string() +
                                 ": not a ptxbench verdict (expected \"format\": \"ptxbench.verdict/1\")");
  fs::remove(m_dir / "t" / "verifier" / "verdict.json");
  put("t/verifier/ptxbench.json", R"({"format": "ptxbench.harbor-verifier/1", "task": "x", "target": "h200",
      "variant": "base", "kernel_state": "lost", "outcome": null, "target_correct": false, "reward": 2})");
  t = read_trial(m_dir / "t");
  ASSERT_FALSE(t);
  EXPECT_EQ(t.err().message,
            (m_dir / "t" / "verifier" / "ptxbench.json").string() + ": reward: expected 0, 1 or null, got 2");
}

}  // namespace
}  // namespace ptxbench::harbor
