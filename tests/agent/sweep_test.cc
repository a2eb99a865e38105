// `ptxbench run` as a black box: kill -9 mid-sweep and resume, a refused key, replay, plan checks.
// The binary talks to the scripted server in this process; the evaluator is the test-only fake.
#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "agent/fake_llm_server.h"
#include "agent/provider_factory.h"
#include "agent/trajectory.h"
#include "core/file_io.h"
#include "core/process.h"
#include "metrics/trajectory_reader.h"
#include "test_support.h"

namespace ptxbench::agent {
namespace {

using ptxbench::testing::fake_llm_server;
using ptxbench::testing::scripted_fault;
namespace fs = std::filesystem;

const std::string k_plain_kernel =
    "```cuda\n#include <ptxbench/abi.h>\n__global__ void k() {}\nvoid run(ptxbench::tensor_view A, "
    "ptxbench::tensor_view B, ptxbench::tensor_view C, cudaStream_t s) {}\nPTXBENCH_EXPORT(run, PTXBENCH_BFLOAT16, "
    "PTXBENCH_BFLOAT16, PTXBENCH_BFLOAT16)\n```\n";

class SweepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    m_bin = ptxbench::testing::bin_dir() / "ptxbench";
    if (!fs::exists(m_bin)) GTEST_SKIP() << "build the `ptxbench` target first (" << m_bin << " is missing)";
    m_out = ptxbench::testing::make_temp_dir("sweep");
  }
  void TearDown() override {
    if (!m_out.empty()) fs::remove_all(m_out);
  }

  std::vector<std::string> argv(int trajectories, int turns, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> a = {m_bin.string(), "run", "--model", "openai:scripted", "--base-url", m_server.base_url(),
                                  "--tasks", "gemm_n7168_k5120", "--trajectories", std::to_string(trajectories),
                                  "--turns", std::to_string(turns), "--variants", "base", "--out", m_out.string(),
                                  "--evaluator", "fake", "-q"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }

  process_result launch(std::vector<std::string> args, double timeout_s,
                        std::vector<std::pair<std::string, std::string>> env = {}) {
    process_spec spec;
    spec.argv = std::move(args);
    spec.timeout_s = timeout_s;
    spec.env_overrides = std::move(env);
    spec.env_overrides.emplace_back("PTXBENCH_ROOT", ptxbench::testing::repo_root().string());
    spec.env_unset = {"OPENAI_API_KEY", "OPENAI_BASE_URL"};
    return run_process(spec);
  }

  int turns_on_disk() {
    int turns = 0;
    if (!fs::exists(m_out / "trajectories")) return 0;
    for (const auto& e : fs::directory_iterator(m_out / "trajectories")) {
      if (e.path().extension() != ".json") continue;
      auto t = trajectory::load(e.path());
      EXPECT_TRUE(t) << t.err().message;  // never a torn file, whenever the kill landed
      if (t) turns += t->completed_turns();
    }
    return turns;
  }

  int api_calls_on_disk() {
    int calls = 0;
    for (const auto& e : fs::directory_iterator(m_out / "trajectories")) {
      if (e.path().extension() != ".json") continue;
      auto t = trajectory::load(e.path());
      if (t) calls += t->json()["info"]["model_stats"].value("api_calls", 0);
    }
    return calls;
  }

  fake_llm_server m_server;
  fs::path m_bin, m_out;
};

TEST_F(SweepTest, KillNineMidSweepThenTheSameCommandFinishesEveryTrajectoryExactly) {
  m_server.set_default_reply(k_plain_kernel);  // correct at 0.85x: never reaches the target, so all turns run
  auto args = argv(12, 4, {"--parallel", "4", "--fake-eval-delay-ms", "200"});
  auto first = launch(args, 3.0);  // 48 evaluations x 200 ms on one slot: the SIGKILL lands mid-sweep
  ASSERT_TRUE(first.timed_out) << "finished before the kill; " << first.err;
  int partial = turns_on_disk();
  EXPECT_GT(partial, 0);
  EXPECT_LT(partial, 48);
  auto second = launch(args, 120);
  ASSERT_TRUE(second.succeeded()) << describe_exit(second) << "\n" << second.err;
  int files = 0;
  for (const auto& e : fs::directory_iterator(m_out / "trajectories")) {
    // A kill between a write's temporary file and its rename leaves one; the re-run removes it.
    EXPECT_EQ(e.path().extension(), ".json") << e.path();
    auto t = trajectory::load(e.path());
    ASSERT_TRUE(t) << t.err().message;
    ++files;
    EXPECT_EQ(t->completed_turns(), 4) << e.path();
    EXPECT_EQ(t->exit_status(), "LimitsExceeded");
    const auto& msgs = t->json()["messages"];
    ASSERT_EQ(msgs.size(), 11u) << e.path();
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(msgs[2 + 2 * k]["extra"]["turn"], k);
      EXPECT_EQ(msgs[3 + 2 * k]["extra"]["turn"], k);
      EXPECT_EQ(msgs[3 + 2 * k]["extra"]["ptxbench"]["label"], "passed");
    }
  }
  EXPECT_EQ(files, 12);
  // Every turn asked the model once, plus at most the calls in flight when the kill landed; and
  // every call the server saw is counted in the trajectory files (none lost to the kill).
  EXPECT_GE(m_server.requests(), 48);
  EXPECT_LE(m_server.requests(), 48 + 4);
  EXPECT_EQ(api_calls_on_disk(), m_server.requests());
  auto summary = parse_json(*read_text_file(m_out / "summary.json", 1 << 24), "summary");
  ASSERT_TRUE(summary);
  EXPECT_EQ((*summary)["totals"]["finished"], 12);
  EXPECT_EQ((*summary)["totals"]["turns_completed"], 48);
  EXPECT_EQ((*summary)["totals"]["correct_trajectories"], 12);
  EXPECT_EQ((*summary)["complete"], true);
  auto plan = parse_json(*read_text_file(m_out / "plan.json", 1 << 24), "plan");
  ASSERT_TRUE(plan);
  EXPECT_EQ((*plan)["plan"].size(), 12u);
  EXPECT_EQ((*plan)["turns"], 4);
  // The metrics reader takes the run as it is: the formats agree.
  auto run = metrics::read_run_dir(m_out);
  ASSERT_TRUE(run) << run.err().message;
  EXPECT_EQ(run->trajectories.size(), 12u);
  EXPECT_EQ(metrics::run_records(*run).size(), 48u);
}

// kill -9 while the model is answering: the call was counted on disk before it was made, so the
// resumed run reports every call the server answered, and names the lost one.
TEST_F(SweepTest, AKillDuringAModelCallLeavesTheCallCounted) {
  m_server.set_default_reply(k_plain_kernel);
  m_server.set_delay_ms(6000);
  auto args = argv(1, 2);
  auto first = launch(args, 3.0);  // the first call is still waiting for its reply
  ASSERT_TRUE(first.timed_out) << first.err;
  ASSERT_EQ(m_server.requests(), 1);
  EXPECT_EQ(api_calls_on_disk(), 1);
  m_server.set_delay_ms(0);
  auto second = launch(args, 60);
  ASSERT_TRUE(second.succeeded()) << describe_exit(second) << "\n" << second.err;
  EXPECT_EQ(turns_on_disk(), 2);
  EXPECT_EQ(m_server.requests(), 3);
  EXPECT_EQ(api_calls_on_disk(), 3);
  auto t = trajectory::load(m_out / "trajectories" / "gemm_n7168_k5120__h200__base__t0.json");
  ASSERT_TRUE(t);
  const auto& interruptions = t->json()["info"]["ptxbench"]["interruptions"];
  ASSERT_EQ(interruptions.size(), 1u);
  EXPECT_EQ(interruptions[0]["kind"], "lost_call");
  EXPECT_EQ(interruptions[0]["turn"], 0);
  auto summary = parse_json(*read_text_file(m_out / "summary.json", 1 << 24), "summary");
  ASSERT_TRUE(summary);
  EXPECT_EQ((*summary)["totals"]["api_calls"], 3);
}

// kill -9 during an evaluation: the reply was saved before it was evaluated, so the resumed run
// evaluates it again instead of paying for a new one, and the count matches the server's.
TEST_F(SweepTest, AKillDuringAnEvaluationNeitherLosesNorRepeatsTheCall) {
  m_server.set_default_reply(k_plain_kernel);
  auto first = launch(argv(1, 2, {"--fake-eval-delay-ms", "8000"}), 3.0);
  ASSERT_TRUE(first.timed_out) << first.err;
  ASSERT_EQ(m_server.requests(), 1);
  EXPECT_EQ(api_calls_on_disk(), 1);  // it was 0 before calls were recorded ahead of time
  auto second = launch(argv(1, 2), 60);
  ASSERT_TRUE(second.succeeded()) << describe_exit(second) << "\n" << second.err;
  EXPECT_EQ(turns_on_disk(), 2);
  EXPECT_EQ(m_server.requests(), 2);
  EXPECT_EQ(api_calls_on_disk(), 2);
}

// Progress into a file (stderr is not a terminal here): a line per finished turn, as it happens.
TEST_F(SweepTest, ALogGetsALinePerFinishedTurn) {
  m_server.set_reply(0, "no code in this reply");
  m_server.set_default_reply(k_plain_kernel);
  auto args = argv(1, 2);
  args.erase(std::find(args.begin(), args.end(), "-q"));
  auto r = launch(args, 60);
  ASSERT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
  EXPECT_NE(r.err.find("gemm_n7168_k5120 base t0 turn 1/2: no_code\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gemm_n7168_k5120 base t0 turn 2/2: passed, speedup 0.850x\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\033["), std::string::npos) << "terminal control codes in a log";
  // The trajectory's line ends with the sweep's state; it is not printed a second time at the end.
  const std::string state = "1/1 done, 0 running | turns 2/2";
  auto first = r.err.find(state);
  EXPECT_NE(first, std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(state, first + 1), std::string::npos) << "the final state printed twice:\n" << r.err;
}

TEST_F(SweepTest, ARefusedKeyStopsTheSweepWithAMessageNamingTheVariable) {
  m_server.always({scripted_fault::kind::status, 401, "", R"({"error":{"message":"Incorrect API key provided"}})"});
  auto r = launch(argv(6, 2, {"--parallel", "2"}), 60, {{"OPENAI_API_KEY", "sk-wrong"}});
  ASSERT_TRUE(r.started);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("the API rejected the key in OPENAI_API_KEY (HTTP 401: Incorrect API key provided)"),
            std::string::npos) << r.err;
  EXPECT_LE(m_server.requests(), 2);  // the other trajectories never started
  EXPECT_EQ(m_server.last_authorization(), "Bearer sk-wrong");
}

TEST_F(SweepTest, RetriesAreRecordedInTheTrajectory) {
  m_server.set_default_reply(k_plain_kernel);
  m_server.inject({scripted_fault::kind::status, 429, "1", R"({"error":{"message":"slow down"}})"});
  m_server.inject({scripted_fault::kind::drop_connection});
  auto r = launch(argv(1, 1), 60);
  ASSERT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
  auto t = trajectory::load(m_out / "trajectories" / "gemm_n7168_k5120__h200__base__t0.json");
  ASSERT_TRUE(t) << t.err().message;
  const auto& attempts = t->json()["messages"][2]["extra"]["attempts"];
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_EQ(attempts[0]["http_status"], 429);
  EXPECT_EQ(attempts[0]["retry_after"], "1");
  EXPECT_DOUBLE_EQ(attempts[0]["wait_s"].get<double>(), 1.0);
  EXPECT_NE(attempts[1]["error"].get<std::string>().find("connection error"), std::string::npos);
  EXPECT_EQ(attempts[2]["http_status"], 200);
}

TEST_F(SweepTest, ReplayModelRunsTheLoopWithoutAnyKey) {
  trajectory_meta meta;
  auto replay = trajectory::start(meta, ordered_json::object(), {"s", "u"});
  auto reply = [](const std::string& content) { return ordered_json{{"role", "assistant"}, {"content", content}}; };
  auto feedback = [](int k) {
    return ordered_json{{"role", "user"}, {"content", "recorded"}, {"extra", {{"turn", k}, {"event", "evaluation"}}}};
  };
  replay.append_turn(reply("```cuda\n#error not yet\n```\n"), feedback(0));
  replay.append_turn(reply(k_plain_kernel.substr(0, k_plain_kernel.size() - 4) + "// wgmma FAKE_SPEEDUP=1.3\n```\n"),
                     feedback(1));
  ASSERT_TRUE(replay.save(m_out / "replay.json"));
  auto r = launch({m_bin.string(), "run", "--model", "replay:" + (m_out / "replay.json").string(), "--tasks",
                   "gemm_n7168_k5120", "--trajectories", "1", "--variants", "builtin-minimal", "--out", (m_out / "run").string(),
                   "--evaluator", "fake"},
                  60);
  ASSERT_TRUE(r.succeeded()) << describe_exit(r) << "\n" << r.err;
  EXPECT_NE(r.err.find("holds 2 replies; running 2 turns per trajectory"), std::string::npos) << r.err;
  auto t = trajectory::load(m_out / "run" / "trajectories" / "gemm_n7168_k5120__h200__builtin-minimal__t0.json");
  ASSERT_TRUE(t) << t.err().message;
  EXPECT_EQ(t->exit_status(), "Submitted");
  const auto& last = t->json()["messages"][5]["extra"];
  EXPECT_EQ(last["ptxbench"]["label"], "passed");
  EXPECT_TRUE(last["ptxbench"]["target_correct"].get<bool>());
  EXPECT_EQ(m_server.requests(), 0);
}

TEST_F(SweepTest, ADifferentCommandOnTheSameRunDirectoryIsRefused) {
  m_server.set_default_reply("no code here");
  ASSERT_TRUE(launch(argv(1, 1), 60).succeeded());
  auto r = launch(argv(1, 2), 60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("was written for a different run: turns is 1 there but 2 now"), std::string::npos) << r.err;
}

TEST_F(SweepTest, ASecondRunOnTheSameDirectoryIsRefusedWhileTheFirstRuns) {
  m_server.set_default_reply(k_plain_kernel);
  auto args = argv(2, 2, {"--fake-eval-delay-ms", "500"});  // about 2 s of evaluations
  process_result first;
  std::thread runner([&] { first = launch(args, 60); });
  for (int i = 0; i < 500 && !fs::exists(m_out / "plan.json"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto second = launch(args, 60);
  runner.join();
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("is in use by another `ptxbench run`"), std::string::npos) << second.err;
  EXPECT_TRUE(first.succeeded()) << describe_exit(first) << "\n" << first.err;
  EXPECT_EQ(turns_on_disk(), 4);
}

TEST(ReplayExample, TheShippedGemmReplayHasTwoReplies) {
  auto file = ptxbench::testing::repo_root() / "examples" / "agent" / "gemm_replay.json";
  EXPECT_EQ(replay_reply_count(file), 2);
  auto p = make_replay_provider(file);
  ASSERT_TRUE(p) << p.err().message;
  auto first = (*p)->complete({{}, 0, std::nullopt});
  ASSERT_TRUE(first.ok());
  EXPECT_NE(first.reply->content.find("```cuda"), std::string::npos);
  auto second = (*p)->complete({{}, 1, std::nullopt});
  ASSERT_TRUE(second.ok());
  EXPECT_NE(second.reply->content.find("wgmma"), std::string::npos);
  EXPECT_EQ(second.reply->content.find("PLACEHOLDER"), std::string::npos);
  EXPECT_EQ((*p)->complete({{}, 2, std::nullopt}).failure.kind, failure_kind::replay_exhausted);
}

}  // namespace
}  // namespace ptxbench::agent
