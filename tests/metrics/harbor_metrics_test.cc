// `ptxbench metrics` over a Harbor job of exported tasks (docs/coding-agents.md, "Scoring a Harbor
// job"): the hand-made job in tests/fixtures/harbor_job/ has three trials —
//   gemm_n7168_k5120__Ab3xQ  claude-code: a `check` (no turn), a compile error, a wrong result and a
//                            pass in its ATIF trajectory, then the verifier's pass (reward 1)
//   gemm_n7168_k5120__Kq72z  mini-swe-agent: no trajectory, no kernel left (reward 0)
//   mha_with_lse_d128__Zz9Lm claude-code: an evaluation of another task (not counted), a correct
//                            kernel without wgmma/TMA, and a verifier that could not evaluate
// and comes out as turns, Table 1 and Fast_p like a MiniPTXAgent run, with warnings for what is
// missing; wrong data fails the command naming the file.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "core/csv.h"
#include "core/file_io.h"
#include "core/json_check.h"
#include "core/process.h"
#include "cli/cli_test_support.h"
#include "test_support.h"

namespace ptxbench::metrics {
namespace {
namespace fs = std::filesystem;

class HarborMetrics : public ::testing::Test {
 protected:
  void SetUp() override {
    m_bin = testing::bin_dir() / "ptxbench";
    if (!fs::exists(m_bin)) GTEST_SKIP() << m_bin << " not built";
    m_dir = testing::make_temp_dir("harbor-metrics");
  }
  void TearDown() override {
    if (!m_dir.empty()) fs::remove_all(m_dir);
  }
  static process_result run(const std::vector<std::string>& args) { return testing::run_cli(args, 60); }
  std::string file(const fs::path& p) {
    auto text = read_text_file(p, 64 << 20);
    return text ? *text : "";
  }
  // A copy of the fixture to break on purpose.
  fs::path copy_job() {
    fs::copy(m_job, m_dir / "job", fs::copy_options::recursive);
    return m_dir / "job";
  }

  fs::path m_bin, m_dir;
  const fs::path m_job = testing::fixtures_dir() / "harbor_job";
};

// label/turn/target_correct/speedup of every turn, per trajectory, from turns.csv.
std::map<std::string, std::vector<std::string>> turns_by_trajectory(const std::string& csv_text) {
  auto t = csv_table::parse(csv_text, "turns.csv");
  EXPECT_TRUE(t) << (t ? "" : t.err().message);
  std::map<std::string, std::vector<std::string>> out;
  if (!t) return out;
  auto col = [&](const char* name) { return *t->column(name); };
  for (std::size_t r = 0; r < t->rows(); ++r)
    out[std::string(t->at(r, col("trajectory")))].push_back(
        std::string(t->at(r, col("turn"))) + " " + std::string(t->at(r, col("label"))) + " tc=" +
        std::string(t->at(r, col("target_correct"))) + " s=" + std::string(t->at(r, col("speedup"))));
  return out;
}

TEST_F(HarborMetrics, TrialsBecomeTrajectoriesOfTurnsWithTable1AndFastP) {
  auto r = run({"metrics", m_job.string(), "--turn-limits", "1,4", "--fast-p", "0:1.5:0.5", "--out", (m_dir / "m").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto turns = turns_by_trajectory(file(m_dir / "m" / "turns.csv"));
  EXPECT_EQ(turns.at("gemm_n7168_k5120__Ab3xQ"),
            (std::vector<std::string>{"0 compile_error tc=0 s=", "1 incorrect_numerical tc=0 s=", "2 passed tc=1 s=1.18",
                                      "3 passed tc=1 s=1.21"}));
  EXPECT_EQ(turns.at("gemm_n7168_k5120__Kq72z"), (std::vector<std::string>{"0 no_code tc=0 s="}));
  EXPECT_EQ(turns.at("mha_with_lse_d128__Zz9Lm"),
            (std::vector<std::string>{"0 passed tc=0 s=0.8", "1 infra_error tc=0 s="}));
  const std::string turns_csv = file(m_dir / "m" / "turns.csv");
  // The model is agent:model; task, target, arch and variant come from the verifier and the verdicts.
  EXPECT_NE(turns_csv.find("claude-code:anthropic/claude-sonnet-4-5,h200,sm_90a,cuda,gemm_n7168_k5120," + m_job.string() +
                           ",base,gemm_n7168_k5120__Ab3xQ,2,passed,passed,1,1,1.18,executed,,GMMA=96;TMA=8,"
                           "GMMA=1048576;TMA=16384,2000,4000,,0.11,0.97,base"),
            std::string::npos)
      << turns_csv;
  EXPECT_NE(turns_csv.find("mini-swe-agent:openai/gpt-5,h200,sm_90a,cuda,gemm_n7168_k5120"), std::string::npos);
  // Table 1: claude-code's GEMM trajectory is solved within 4 turns (not within 1), gpt-5's never.
  EXPECT_NE(r.out.find("claude-code:anthropic/claude-sonnet-4-5"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mini-swe-agent:openai/gpt-5"), std::string::npos) << r.out;
  const std::string trajectory_rates = file(m_dir / "m" / "trajectory_rates.csv");
  EXPECT_NE(trajectory_rates.find("claude-code:anthropic/claude-sonnet-4-5,sm_90a,cuda,gemm_n7168_k5120," + m_job.string() +
                                  ",4,1,1,1,1,1\n"),
            std::string::npos)
      << trajectory_rates;
  EXPECT_NE(trajectory_rates.find("claude-code:anthropic/claude-sonnet-4-5,sm_90a,cuda,gemm_n7168_k5120," + m_job.string() +
                                  ",1,1,0,0,0,0\n"),
            std::string::npos)
      << trajectory_rates;
  const std::string fast_p = file(m_dir / "m" / "fast_p.csv");
  EXPECT_NE(fast_p.find("claude-code:anthropic/claude-sonnet-4-5,sm_90a,cuda,gemm_n7168_k5120"), std::string::npos) << fast_p;
  // What is missing is said: the verifier that could not evaluate, the other task's evaluation.
  const std::string warnings = file(m_dir / "m" / "warnings.csv");
  EXPECT_NE(warnings.find("other_task_evaluation,"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("unfinished_trajectory,"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("the GPU worker lost its GPU"), std::string::npos) << warnings;
  EXPECT_EQ(std::count(warnings.begin(), warnings.end(), '\n'), 3) << warnings;
  const std::string meta = file(m_dir / "m" / "metrics.json");
  EXPECT_NE(meta.find("\"kind\": \"harbor_job\""), std::string::npos) << meta;
  EXPECT_NE(r.err.find("6 turns in 3 runs (1 infra-error turns excluded)"), std::string::npos) << r.err;
  // --strict refuses the warnings; a single trial folder is a run too.
  EXPECT_EQ(run({"metrics", m_job.string(), "--strict", "--out", (m_dir / "s").string()}).exit_code, 2);
  auto one = run({"metrics", (m_job / "gemm_n7168_k5120__Ab3xQ").string(), "--out", (m_dir / "one").string()});
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(file(m_dir / "one" / "turns.csv").find(",3,passed,"), std::string::npos);
}

TEST_F(HarborMetrics, WrongDataFailsNamingTheFile) {
  const fs::path job = copy_job();
  const fs::path t1 = job / "gemm_n7168_k5120__Ab3xQ";
  auto fails_with = [&](const std::string& message) {
    auto r = run({"metrics", job.string(), "--out", (m_dir / "m").string()});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err, "ptxbench: " + message + "\n");
  };
  // A reward.txt that contradicts ptxbench.json.
  ASSERT_TRUE(write_file_atomic(t1 / "verifier" / "reward.txt", "0\n"));
  fails_with((t1 / "verifier").string() + "/reward.txt: 0 contradicts ptxbench.json's reward 1");
  ASSERT_TRUE(write_file_atomic(t1 / "verifier" / "reward.txt", "1\n"));
  // A reward the verdict does not support (the final kernel did not pass).
  auto verdict = ordered_json::parse(file(t1 / "verifier" / "verdict.json"));
  verdict["outcome"] = "incorrect_numerical";
  verdict["status"] = "INCORRECT_NUMERICAL";
  ASSERT_TRUE(write_file_atomic(t1 / "verifier" / "verdict.json", verdict.dump(2)));
  fails_with((t1 / "verifier").string() + "/ptxbench.json: reward 1 contradicts the verdict (incorrect_numerical, not target-correct)");
  verdict["outcome"] = "exploded";
  ASSERT_TRUE(write_file_atomic(t1 / "verifier" / "verdict.json", verdict.dump(2)));
  fails_with((t1 / "verifier" / "verdict.json").string() + ": verdict: unknown outcome 'exploded'");
  fs::copy(m_job / "gemm_n7168_k5120__Ab3xQ" / "verifier" / "verdict.json", t1 / "verifier" / "verdict.json",
           fs::copy_options::overwrite_existing);
  // A malformed ATIF trajectory.
  auto atif = ordered_json::parse(file(t1 / "agent" / "trajectory.json"));
  atif["steps"][2]["step_id"] = 1;
  ASSERT_TRUE(write_file_atomic(t1 / "agent" / "trajectory.json", atif.dump()));
  fails_with((t1 / "agent" / "trajectory.json").string() + ": steps[2].step_id: 1 follows step 2; step ids must increase");
  // A torn one is missing data: a warning, and the trial still has its final turn.
  ASSERT_TRUE(write_file_atomic(t1 / "agent" / "trajectory.json", "{\"schema_version\": \"ATIF-v1.4\", \"ste"));
  auto torn = run({"metrics", job.string(), "--out", (m_dir / "torn").string()});
  EXPECT_EQ(torn.exit_code, 0) << torn.err;
  EXPECT_NE(torn.err.find("trajectory.json: invalid JSON"), std::string::npos) << torn.err;
  EXPECT_EQ(turns_by_trajectory(file(m_dir / "torn" / "turns.csv")).at("gemm_n7168_k5120__Ab3xQ"),
            (std::vector<std::string>{"0 passed tc=1 s=1.21"}));
}

}  // namespace
}  // namespace ptxbench::metrics
